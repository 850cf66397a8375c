// Deterministic documents for durability tests: 20–40 sentences each, so documents differ in
// chunk count, and cheap to make by the thousand.
const WORDS = [
  'river',
  'ledger',
  'harbour',
  'violet',
  'engine',
  'quartz',
  'meadow',
  'signal',
  'copper',
  'lantern',
];

export function syntheticDocument(i: number): string {
  const sentences: string[] = [];
  const count = 20 + (i % 21);
  for (let s = 0; s < count; s++) {
    const picked = Array.from({ length: 11 }, (_, w) => WORDS[(i * 7 + s * 3 + w * 11) % WORDS.length]);
    sentences.push(`Document ${i} sentence ${s}: ${picked.join(' ')}.`);
  }
  return sentences.join(' ');
}
