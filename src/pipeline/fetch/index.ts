// The SSRF-safe URL downloader behind `POST /v1/ingest/url`: submit-time URL checks for the HTTP
// layer, and the download itself (address policy at connect time, redirects checked hop by hop,
// byte and time caps) for the worker's fetch stage.
export { type AddressPolicy, createAddressPolicy, isPublicAddress } from './address-policy.js';
export { downloadToSink } from './download-to-sink.js';
export { type UrlDownloaderOptions, urlDownloader } from './download-url.js';
export { FetchError, type FetchFailureCode } from './errors.js';
export { allowedAddresses, guardedLookup } from './guarded-connect.js';
export { type FetchedBody, type FetchOptions, openUrl } from './open-url.js';
export { postWebhook, UndeliverableError, WebhookPoster, type WebhookPostOptions } from './post-webhook.js';
export { checkSubmittedUrl, redactUrl } from './url-check.js';
