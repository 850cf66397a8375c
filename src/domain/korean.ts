// Korean nouns without their particles. Korean writes a noun and the particles that follow it as
// one space-separated word ("한국의": Korea + of), so a search for the noun alone would never meet
// it. The common particles are cut from a word's end, the longest first, the same way at index
// and at query time. The cut is a light stemmer, not a morphological analysis: a noun that
// happens to end in a particle's syllable loses it too, on both sides alike.

/** Particles and particle clusters, longest first so "에서는" wins over "는". */
const PARTICLES = [
  '으로부터',
  '에서부터',
  '에게서',
  '한테서',
  '이라고',
  '에서는',
  '에서도',
  '으로는',
  '으로도',
  '에게는',
  '까지는',
  '부터는',
  '이라는',
  '에서',
  '에게',
  '한테',
  '께서',
  '으로',
  '이나',
  '이랑',
  '이며',
  '까지',
  '부터',
  '처럼',
  '보다',
  '마다',
  '조차',
  '밖에',
  '라고',
  '라는',
  '에는',
  '에도',
  '로는',
  '와는',
  '과는',
  '은',
  '는',
  '을',
  '를',
  '의',
  '에',
  '이',
  '가',
  '와',
  '과',
  '도',
  '만',
  '로',
].sort((a, b) => b.length - a.length);

/**
 * Single syllables that end many nouns as well as being particles ("아이" child, "나라" ...): cut
 * only when two syllables or more remain, so short nouns keep their last syllable.
 */
const AMBIGUOUS = new Set(['이', '가', '도', '만', '로', '와', '과']);

const HANGUL_SYLLABLES = /^[\uac00-\ud7a3]+$/;

/** A Hangul word without its trailing particle; any other word as it is. */
export function withoutParticle(word: string): string {
  if (word.length < 2 || !HANGUL_SYLLABLES.test(word)) return word;
  for (const particle of PARTICLES) {
    if (!word.endsWith(particle)) continue;
    const stem = word.slice(0, -particle.length);
    const minimum = AMBIGUOUS.has(particle) ? 2 : 1;
    if (stem.length >= minimum) return stem;
  }
  return word;
}
