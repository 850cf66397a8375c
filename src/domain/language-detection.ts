// Telling a text's language, offline and in a few microseconds: by its script where one script
// belongs to one language (Hangul, kana, Thai, Greek…), else by counting the function words of
// each language of that script ("the", "und", "что") among the text's first words. Function words
// are the most frequent words of every text, so a few hundred characters of prose hold dozens of
// them; n-gram detectors read the same text far slower and hold large tables in every pipeline
// thread (bench/RESULTS.md, section 11, measures this detector's cost).

/** How much of a text is read: its first words, cut at a word boundary. */
const SAMPLE_CHARS = 600;
/**
 * Fewer function words than this (a word shared by n languages counting 1/n for each) tell
 * nothing: a title, a list of names, a table.
 */
const MIN_HITS = 2;
/**
 * The winner must have this many times the hits of the next language, or this many more: close
 * languages (Danish and Norwegian) share most of their function words and differ in a few.
 */
const MARGIN = 1.5;
const LEAD = 2;
/** Letters of one script needed, as a share of all letters, for the script to decide. */
const SCRIPT_SHARE = 0.3;

/**
 * The most frequent function words of each language (articles, pronouns, prepositions,
 * conjunctions, auxiliaries), lower-case, a few dozen each.
 * Words shared by several languages of a script count for each of them.
 */
const FUNCTION_WORDS: Readonly<Record<string, string>> = {
  en: 'the of and to in is that for it with as was on are by this be at from have or an which not but they his her their were has been its also would there can who more will into when one all',
  de: 'der die und in den von zu das mit sich des auf fur ist im dem nicht ein eine als auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem uber einen so zum war haben nur oder aber vor zur bis',
  fr: 'le la les de des et en du un une est que pour dans qui par sur au pas plus ne il elle se ce sont avec ou aux son sa ses cette mais leur nous vous ont etre fait comme',
  es: 'el la de que y en los las del se por un una con no para es al lo como mas pero sus su le ya fue este ha si porque esta entre cuando muy sin sobre tambien me hasta hay donde',
  it: 'il di che e la per un una in del della non sono le dei con si da al lo gli nel alla anche ma come piu ha questo sua suo dalla delle degli ed sul nella essere era',
  pt: 'de que o a do da em um para e com nao uma os no se na por mais as dos como mas foi ao ele das tem seu sua ou ser quando muito ha nos ja esta isso entre sao pelo pela',
  nl: 'de het een en van in is dat op te zijn met voor niet aan er die maar om ook als dan bij uit nog wordt door naar over werd heeft tot worden deze hij zij ze wat',
  sv: 'och i att det som en pa ar av for med till den har de inte om ett han men var sig fran vi sa kan nar hon under efter skulle ocksa eller denna dessa',
  da: 'og i at det som en pa er af for med til den har de ikke om et han men var sig fra vi sa kan nar hun efter skulle ogsa eller denne disse blev bliver',
  no: 'og i at det som en pa er av for med til den har de ikke om et han men var seg fra vi sa kan nar hun etter skulle ogsa eller denne disse ble blir',
  fi: 'ja on ei se etta oli ovat han mutta kun tai myos kuin jos niin mita sen joka ole nyt hanen olla joten vain',
  tr: 've bir bu da de icin ile olarak daha gibi en cok ama ne ya o kadar sonra olan ise her diye ki mi',
  ro: 'si de la in cu pe un o care nu din este sa ca mai ce au fost pentru sunt sau dar prin le ale lui',
  hu: 'a az es hogy nem is egy ez meg de van csak mar el ki mint vagy sem volt lesz ha azt ami',
  pl: 'i w na z do nie sie to jest ze o jak ale po co tak czy od przez dla ktory jego tylko jej juz moze sa',
  cs: 'a v na se je ze s z do to o k jako by pro ale jsou byl bylo tak jeho ktery podle nebo jen',
  id: 'yang dan di ini itu dengan untuk dari dalam tidak akan pada juga ke adalah ada oleh karena bisa mereka sudah telah atau',
  vi: 'cua va cac co la trong cho nhung mot voi khong nay cung da nguoi tu khi ve thi nam nhieu',
  lt: 'ir kad yra su bet kaip jo tai buvo is del kai jis ji nuo per arba',
  ru: 'и в не на что с по это как он к но из его за от то для же все был она так о её они бы у а при после об более также который которые этот была были было или когда уже только если где под через между их том году',
  uk: 'і в не на що з та це як він до але за від його для же все був вона так про її вони б у є й також який які після року або коли вже тільки якщо де під через між їх',
  bg: 'и в на не да се за от че с по е са като но това той тя те ще или му',
  sr: 'и у на да се је не за од са што као али то су био из ће',
  ar: 'في من على ان الى عن مع هذا هذه التي الذي كان ما لا او ثم قد كل بين عام',
  fa: 'و در به از که این را با است برای آن یک تا می شود بود هم',
  ur: 'کے میں کی ہے اور سے کو نے یہ کہ ایک پر بھی ہیں تھا',
};

/** Scripts whose letters belong to one language each, as far as telling goes. */
const ONE_LANGUAGE_SCRIPTS: readonly [RegExp, string][] = [
  [/[\p{sc=Hiragana}\p{sc=Katakana}]/u, 'ja'],
  [/\p{sc=Hangul}/u, 'ko'],
  [/\p{sc=Thai}/u, 'th'],
  [/\p{sc=Greek}/u, 'el'],
  [/\p{sc=Hebrew}/u, 'he'],
  [/\p{sc=Armenian}/u, 'hy'],
  [/\p{sc=Georgian}/u, 'ka'],
  [/\p{sc=Tamil}/u, 'ta'],
  [/\p{sc=Bengali}/u, 'bn'],
  [/\p{sc=Devanagari}/u, 'hi'],
  [/\p{sc=Lao}/u, 'lo'],
  [/\p{sc=Khmer}/u, 'km'],
  [/\p{sc=Myanmar}/u, 'my'],
];
const HAN = /\p{sc=Han}/u;
const KANA = /[\p{sc=Hiragana}\p{sc=Katakana}]/u;
const LETTER = /\p{L}/u;
const WORD = /[\p{L}\p{M}]+/gu;
const ASCII_WORD = /[a-z]+/g;
const NON_ASCII = /[\u0080-\uffff]/;
const MARKS = /\p{M}+/gu;

const languagesOf = new Map<string, string[]>();
for (const [language, words] of Object.entries(FUNCTION_WORDS)) {
  // Written as the language writes them, looked up as the text's words are: marks removed.
  for (const word of words.normalize('NFD').replace(MARKS, '').split(' ')) {
    const list = languagesOf.get(word);
    if (list) list.push(language);
    else languagesOf.set(word, [language]);
  }
}

/**
 * The language of a text (ISO 639-1), or null when it cannot be told: too few function words, two
 * languages too close to call, or a script and language it does not know.
 */
export function detectLanguage(text: string): string | null {
  const sample = text.length <= SAMPLE_CHARS ? text : text.slice(0, SAMPLE_CHARS);
  const ascii = !NON_ASCII.test(sample);
  if (!ascii) {
    const bySight = byScript(sample);
    if (bySight !== undefined) return bySight;
  }
  const words = ascii
    ? sample.toLowerCase().match(ASCII_WORD)
    : sample.normalize('NFD').toLowerCase().replace(MARKS, '').match(WORD);
  const hits = new Map<string, number>();
  for (const word of words ?? []) {
    const languages = languagesOf.get(word);
    if (!languages) continue;
    // A word several languages share says less about each of them.
    for (const language of languages) hits.set(language, (hits.get(language) ?? 0) + 1 / languages.length);
  }
  let best: string | null = null;
  let first = 0;
  let second = 0;
  for (const [language, n] of hits) {
    if (n > first) {
      second = first;
      first = n;
      best = language;
    } else if (n > second) {
      second = n;
    }
  }
  if (best === null || first < MIN_HITS) return null;
  if (first < second * MARGIN && first - second < LEAD) return null;
  return best;
}

/**
 * The language a script alone decides: Japanese when kana are among Han characters, Chinese for
 * Han alone, Korean, Thai, Greek…; null for a script it cannot tell by sight; undefined when the
 * text's letters are of a script (Latin, Cyrillic) that its words must tell.
 */
function byScript(sample: string): string | null | undefined {
  let letters = 0;
  let han = 0;
  let kana = 0;
  const counts = new Map<string, number>();
  for (const char of sample) {
    if (!LETTER.test(char)) continue;
    letters++;
    if (char.charCodeAt(0) < 0x250) continue;
    if (HAN.test(char)) {
      han++;
      continue;
    }
    if (KANA.test(char)) kana++;
    for (const [script, language] of ONE_LANGUAGE_SCRIPTS) {
      if (script.test(char)) {
        counts.set(language, (counts.get(language) ?? 0) + 1);
        break;
      }
    }
  }
  if (letters === 0) return null;
  if (kana > 0 && kana + han >= letters * SCRIPT_SHARE) return 'ja';
  if (han >= letters * SCRIPT_SHARE) return 'zh';
  for (const [language, n] of counts) if (n >= letters * SCRIPT_SHARE) return language;
  return undefined;
}
