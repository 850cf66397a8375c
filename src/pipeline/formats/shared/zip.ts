// Reading a yauzl archive one entry at a time with await, for the format check and the archive
// limits, without leaving an 'error' event unhandled between two reads.
import type { Entry, ZipFile } from 'yauzl';

/** The next entry, or null after the last. Open the archive with lazyEntries: true. */
export function nextEntry(zip: ZipFile): Promise<Entry | null> {
  if (zip.listenerCount('error') === 0) zip.on('error', () => {});
  return new Promise((resolve, reject) => {
    const onEntry = (entry: Entry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}
