/**
 * A response body that is not JSON: bytes or text with their own content type (a static file, a
 * compressed payload, a CSV export). The router sends it as is, with `content-type` set to
 * {@link RawBody.contentType}; other headers (ETag, Content-Encoding, Cache-Control) come from the
 * handler's result. A route declares such a response with `contentType` instead of `schema`.
 */
export class RawBody {
  /**
   * @param bytes the body as sent
   * @param contentType its media type, e.g. `text/css; charset=utf-8`
   */
  constructor(
    readonly bytes: string | Uint8Array,
    readonly contentType: string,
  ) {}
}
