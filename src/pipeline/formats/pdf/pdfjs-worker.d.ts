// pdfjs-dist ships no types for the worker half of pdf.js; extract.ts only hands the module back to
// pdf.js, so this is all of it we touch.
declare module 'pdfjs-dist/legacy/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
