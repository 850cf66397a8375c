// The languages keyword search knows: which ISO 639-1 codes are accepted and which have a
// Snowball stemmer. How a text's language is told when nobody gave it: language-detection.ts.
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

/**
 * A stemmer that leaves a word as it is where its own code throws (third-party code run on any
 * text: the Bulgarian one throws on some Cyrillic words, which is why it is not in the table).
 */
export function guardedStemmer(stem: (word: string) => string): (word: string) => string {
  return (word) => {
    try {
      return stem(word) || word;
    } catch {
      return word;
    }
  };
}

const ISO_639_1 = /^[a-z]{2}$/;
const names = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/**
 * Whether `code` is an ISO 639-1 language code (lower case). Any such language is accepted: one
 * without a stemmer here is folded and segmented like every other, just not stemmed.
 */
export function isLanguageCode(code: string): boolean {
  return ISO_639_1.test(code) && names.of(code) !== undefined;
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
