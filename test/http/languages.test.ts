// Documents in their own languages through the API: `language` on ingest, told from the text when
// absent, shown in the status record, and words found inside sentences of languages written
// without spaces or with particles and inflections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';

describe('documents in their own languages', () => {
  let h: Harness;
  let ids: string[];
  beforeAll(async () => {
    h = await startHarness();
    const res = await h.request('POST', '/v1/ingest', {
      body: {
        documents: [
          { text: '我们今天去北京旅游，然后参观了故宫和天安门广场，晚上吃了北京烤鸭。' },
          { text: '明日の天気予報によると、東京では午後から雨が降るそうです。傘を忘れないでください。' },
          { text: '한국의 수도는 서울입니다. 서울에서 부산까지 기차로 세 시간 걸립니다.' },
          {
            text: 'Die Kinder spielten den ganzen Nachmittag in den großen Häusern am Rand der Stadt, bis es dunkel wurde.',
          },
          { text: 'Short note', language: 'de' },
        ],
      },
    });
    expect(res.statusCode).toBe(202);
    ids = res.json().document_ids;
    await h.waitForDone(h.orgA, ids);
  });
  afterAll(() => h.close());

  const found = async (query: string, body: Record<string, unknown> = {}) => {
    const res = await h.request('POST', '/v1/query', { body: { query, ...body } });
    expect(res.statusCode).toBe(200);
    return res.json().results.map((r: { document_id: string }) => r.document_id);
  };

  it('finds a word inside a sentence written without spaces, or with its particle attached', async () => {
    expect(await found('北京')).toEqual([ids[0]]);
    expect(await found('東京')).toEqual([ids[1]]);
    expect(await found('天気')).toEqual([ids[1]]);
    expect(await found('한국')).toEqual([ids[2]]);
    expect(await found('부산')).toEqual([ids[2]]);
  });

  it('finds an inflected word by another form of it', async () => {
    expect(await found('Haus')).toEqual([ids[3]]);
    expect(await found('Haus', { language: 'de' })).toEqual([ids[3]]);
  });

  it('shows the language each document was analysed in: given, or told from its text', async () => {
    const languages = [];
    for (const id of ids) languages.push((await h.request('GET', `/v1/documents/${id}`)).json().language);
    expect(languages).toEqual(['zh', 'ja', 'ko', 'de', 'de']);
  });

  it('refuses a language that is not an ISO 639-1 code, pointing at it', async () => {
    for (const language of ['german', 'zz', 'DE']) {
      const res = await h.request('POST', '/v1/ingest', { body: { documents: [{ text: 'x', language }] } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors?.[0]?.pointer ?? '').toContain('language');
    }
    const query = await h.request('POST', '/v1/query', { body: { query: 'x', language: 'zz' } });
    expect(query.statusCode).toBe(400);
    const url = await h.request('POST', '/v1/ingest/url', {
      body: { url: 'https://example.com/a.pdf', language: 'zz' },
    });
    expect(url.statusCode).toBe(400);
  });
});
