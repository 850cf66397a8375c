// The languages keyword search knows: which ISO 639-1 codes are accepted, which have a Snowball
// stemmer, and how a text's language is told when nobody gave it (detected offline from its
// character trigrams by `franc-min`, whose tables for the 82 most spoken languages ship in the
// package: nothing is downloaded, and a thread holds them in under 2 MB).
import { stemmer as arabic } from '@orama/stemmers/arabic';
import { stemmer as armenian } from '@orama/stemmers/armenian';
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as greek } from '@orama/stemmers/greek';
import { stemmer as hungarian } from '@orama/stemmers/hungarian';
import { stemmer as hindi } from '@orama/stemmers/indian';
import { stemmer as indonesian } from '@orama/stemmers/indonesian';
import { stemmer as irish } from '@orama/stemmers/irish';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as lithuanian } from '@orama/stemmers/lithuanian';
import { stemmer as nepali } from '@orama/stemmers/nepali';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as romanian } from '@orama/stemmers/romanian';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as serbian } from '@orama/stemmers/serbian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as tamil } from '@orama/stemmers/tamil';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stemmer as ukrainian } from '@orama/stemmers/ukrainian';
import { franc } from 'franc-min';
import { ERRORS } from './errors.js';

/**
 * Snowball stemmers by ISO 639-1 code, applied to a word before its accents are folded (their
 * rules read the accents: Russian "й", Spanish "ó"). English is not here: it keeps the Porter
 * stemmer of search-words.ts, which runs on folded ASCII words.
 */
export const SNOWBALL_STEMMERS: Readonly<Record<string, (word: string) => string>> = {
  ar: arabic,
  da: danish,
  de: german,
  el: greek,
  es: spanish,
  fi: finnish,
  fr: french,
  ga: irish,
  hi: hindi,
  hu: hungarian,
  hy: armenian,
  id: indonesian,
  it: italian,
  lt: lithuanian,
  nb: norwegian,
  ne: nepali,
  nl: dutch,
  nn: norwegian,
  no: norwegian,
  pt: portuguese,
  ro: romanian,
  ru: russian,
  sr: serbian,
  sv: swedish,
  ta: tamil,
  tr: turkish,
  uk: ukrainian,
};

const ISO_639_1 = /^[a-z]{2}$/;
const names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/**
 * Whether `code` is an ISO 639-1 language code (lower case). Any such language is accepted: one
 * without a stemmer here is folded and segmented like every other, just not stemmed.
 */
export function isLanguageCode(code: string): boolean {
  return ISO_639_1.test(code) && names.of(code) !== undefined;
}

/** The English name of a language code ("de" → "German"), for messages and listings. */
export function languageName(code: string): string {
  return names.of(code) ?? code;
}

/**
 * How much of a text the detector reads: its trigram counts settle within a few hundred
 * characters of prose, and the cost grows with the sample (bench/RESULTS.md, section 11).
 */
const DETECT_SAMPLE_CHARS = 600;
/**
 * Samples shorter than this are told only by their script: a sentence or two of one Latin (or
 * Cyrillic, Arabic, Devanagari) language shares most of its trigrams with its neighbours.
 */
const DETECT_MIN_CHARS = 100;
/** franc-min's answers that its script alone decides (one language per script among its 82). */
const TOLD_BY_SCRIPT = new Set([
  'amh',
  'ben',
  'cmn',
  'ell',
  'guj',
  'jpn',
  'kan',
  'kor',
  'mal',
  'mya',
  'pan',
  'sin',
  'tam',
  'tel',
  'tha',
]);

/** franc-min's ISO 639-3 codes with an ISO 639-1 code (the rest are reported as unknown). */
const ISO_639_1_OF: Readonly<Record<string, string>> = {
  amh: 'am',
  arb: 'ar',
  azj: 'az',
  bel: 'be',
  ben: 'bn',
  bos: 'bs',
  bul: 'bg',
  ces: 'cs',
  ckb: 'ku',
  cmn: 'zh',
  deu: 'de',
  ell: 'el',
  eng: 'en',
  fra: 'fr',
  guj: 'gu',
  hau: 'ha',
  hin: 'hi',
  hrv: 'hr',
  hun: 'hu',
  ibo: 'ig',
  ind: 'id',
  ita: 'it',
  jav: 'jv',
  jpn: 'ja',
  kan: 'kn',
  kaz: 'kk',
  kin: 'rw',
  kor: 'ko',
  lin: 'ln',
  mal: 'ml',
  mar: 'mr',
  mya: 'my',
  nld: 'nl',
  npi: 'ne',
  nya: 'ny',
  pan: 'pa',
  pes: 'fa',
  pol: 'pl',
  por: 'pt',
  ron: 'ro',
  run: 'rn',
  rus: 'ru',
  sin: 'si',
  som: 'so',
  spa: 'es',
  srp: 'sr',
  sun: 'su',
  swe: 'sv',
  swh: 'sw',
  tam: 'ta',
  tel: 'te',
  tgl: 'tl',
  tha: 'th',
  tur: 'tr',
  ukr: 'uk',
  urd: 'ur',
  uzn: 'uz',
  vie: 'vi',
  yor: 'yo',
  zlm: 'ms',
  zul: 'zu',
};

/**
 * The language of a text by its character trigrams, or null when it cannot be told (a short
 * text not told by its script, a language without an ISO 639-1 code). The first DETECT_SAMPLE_CHARS are read, cut at a
 * space where one is near, so a word is never split.
 */
export function detectLanguage(text: string): string | null {
  let sample = text;
  if (sample.length > DETECT_SAMPLE_CHARS) {
    const space = sample.lastIndexOf(' ', DETECT_SAMPLE_CHARS);
    sample = sample.slice(0, space > DETECT_SAMPLE_CHARS / 2 ? space : DETECT_SAMPLE_CHARS);
  }
  const code = franc(sample, { minLength: 10 });
  if (sample.length < DETECT_MIN_CHARS && !TOLD_BY_SCRIPT.has(code)) return null;
  return ISO_639_1_OF[code] ?? null;
}

/**
 * A document's `language`, when given, must be an ISO 639-1 code (lower case); `pointer` names it
 * in the 400.
 */
export function checkLanguage(language: string | null | undefined, pointer: string): void {
  if (language === undefined || language === null || isLanguageCode(language)) return;
  const message = `must be an ISO 639-1 language code such as "en" or "de", not ${JSON.stringify(language)}`;
  throw ERRORS.invalid(`\`language\` ${message}.`, [{ pointer, message }]);
}
