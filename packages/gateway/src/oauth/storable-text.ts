// Text the control plane can store: PostgreSQL text holds no NUL, and an unpaired surrogate is not valid UTF-8.
// eslint-disable-next-line no-control-regex -- finding NUL is what this pattern is for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);
