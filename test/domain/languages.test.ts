// Keyword analysis per language, on real sentences: a word a reader would search for is found
// inside the sentence in its own language's analysis, whatever inflection or script the sentence
// writes it in, and a text's language is told from the text.

import { stemmer as bulgarian } from '@orama/stemmers/bulgarian';
import { describe, expect, it } from 'vitest';
import { detectLanguage } from '../../src/domain/language-detection.js';
import { checkLanguage, guardedStemmer, isLanguageCode } from '../../src/domain/languages.js';
import { analyzer, documentLanguage, queryAnalyzers, queryWordsOf } from '../../src/domain/search-words.js';

/** Whether every word of `query`, analysed in `language`, is among the words of `text`. */
function finds(language: string, text: string, query: string): boolean {
  const a = analyzer(language);
  const words = new Set(a.words(text).split(' '));
  const wanted = a.queryWords(query);
  return wanted.length > 0 && wanted.every((w) => words.has(w));
}

describe('word segmentation and particles', () => {
  it.each([
    ['zh', '我们今天去北京旅游。', '北京'],
    ['zh', '中华人民共和国的首都是北京市，人口超过两千万。', '首都'],
    ['ja', '東京の天気は晴れです。', '東京'],
    ['ja', '明日の天気予報によると、東京では雨が降るそうです。', '天気'],
    ['th', 'ประเทศไทยมีประชากรมากกว่าหกสิบล้านคน', 'ประชากร'],
    ['ko', '한국의 수도는 서울입니다.', '한국'],
    ['ko', '서울에서 부산까지 기차로 세 시간 걸립니다.', '부산'],
    ['ko', '나는 도서관에서 책을 읽었다.', '도서관'],
  ])('%s: finds %s in a sentence', (language, sentence, word) => {
    expect(finds(language, sentence, word)).toBe(true);
  });

  it('keeps the marks that are part of a letter (Thai vowels, Hindi vowel signs, Japanese voicing)', () => {
    expect(analyzer('none').words('ガス')).not.toBe(analyzer('none').words('カス'));
    expect(analyzer('none').words('नमस्ते')).toBe('नमस्ते');
    expect(analyzer('none').words('Café naïve')).toBe('cafe naive');
  });

  it('cuts a run without breaks into bounded pieces and still finds its words', () => {
    const text = '北京'.repeat(5_000);
    const words = analyzer('zh').words(text).split(' ');
    expect(words.length).toBeGreaterThan(1000);
    expect(words.every((w) => w.length <= 64)).toBe(true);
  });
});

describe('stemming in each language', () => {
  it.each([
    ['en', 'The runners were running along the river.', 'run'],
    ['de', 'Die Kinder spielten in den großen Häusern der Stadt.', 'Haus'],
    ['fr', 'Les enfants jouaient dans les grandes maisons de la ville.', 'maison'],
    ['es', 'Los niños jugaban en las casas grandes de la ciudad.', 'casa'],
    ['it', 'I bambini giocavano nelle grandi case della città.', 'casa'],
    ['pt', 'As crianças brincavam nas grandes casas da cidade.', 'casa'],
    ['nl', 'De kinderen speelden in de grote huizen van de stad.', 'kinderen'],
    ['sv', 'Barnen lekte i stadens stora husen.', 'barn'],
    ['ru', 'Дети играли в больших домах города.', 'дом'],
    ['ru', 'Он читал интересные книги о России.', 'книга'],
  ])('%s: finds %s in an inflected sentence', (language, sentence, word) => {
    expect(finds(language, sentence, word)).toBe(true);
  });

  it('a stemmer that throws leaves the word as it is', () => {
    // The Bulgarian stemmer writes into a string on this word (and so is not used).
    expect(() => bulgarian('сохранения')).toThrow(TypeError);
    expect(guardedStemmer(bulgarian)('сохранения')).toBe('сохранения');
    expect(guardedStemmer(() => '')('word')).toBe('word');
  });
});

describe('languages of documents and queries', () => {
  it('tells the language of real paragraphs', () => {
    const paragraphs: [string, string][] = [
      [
        'en',
        'The committee approved the new budget after a long debate about public transport. Members of the council argued that the city needs more buses and safer cycling lanes before the winter.',
      ],
      [
        'de',
        'Der Ausschuss hat den neuen Haushalt nach einer langen Debatte über den Nahverkehr genehmigt. Die Mitglieder des Rates meinten, die Stadt brauche vor dem Winter mehr Busse und sicherere Radwege.',
      ],
      [
        'es',
        'El comité aprobó el nuevo presupuesto tras un largo debate sobre el transporte público. Los miembros del consejo sostuvieron que la ciudad necesita más autobuses y carriles bici más seguros antes del invierno.',
      ],
      [
        'ru',
        'Комитет утвердил новый бюджет после долгих дебатов об общественном транспорте. Члены совета заявили, что городу до зимы нужны новые автобусы и более безопасные велосипедные дорожки.',
      ],
      [
        'zh',
        '委员会在关于公共交通的长时间辩论后批准了新的预算。议员们认为，城市在冬天之前需要更多的公共汽车和更安全的自行车道。',
      ],
    ];
    for (const [language, text] of paragraphs) expect(detectLanguage(text)).toBe(language);
    expect(detectLanguage('ok')).toBeNull();
  });

  it('a given language wins; SEARCH_LANGUAGE decides when none is given or told', () => {
    expect(documentLanguage('de', () => 'en', 'auto')).toBe('de');
    expect(documentLanguage(null, () => 'fr', 'auto')).toBe('fr');
    expect(documentLanguage(null, () => null, 'auto')).toBe('en');
    expect(documentLanguage(null, () => 'fr', 'es')).toBe('es');
    expect(documentLanguage(null, () => 'fr', 'english')).toBe('en');
    expect(documentLanguage(null, () => 'fr', 'none')).toBeNull();
  });

  it('a query is read in every language of the org, so each document meets its own forms', () => {
    const analyzers = queryAnalyzers(['en', 'de'], 'languages', 'auto');
    const words = queryWordsOf('Häuser running', analyzers);
    expect(words).toContain('run');
    expect(words).toContain(analyzer('de').queryWords('Häuser')[0]);
  });

  it('accepts ISO 639-1 codes only', () => {
    expect(isLanguageCode('de')).toBe(true);
    expect(isLanguageCode('zz')).toBe(false);
    expect(isLanguageCode('DE')).toBe(false);
    expect(() => checkLanguage('german', '/language')).toThrow(/ISO 639-1/);
    expect(() => checkLanguage(undefined, '/language')).not.toThrow();
  });
});
