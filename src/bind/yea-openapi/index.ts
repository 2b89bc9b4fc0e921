// The OpenAPI adapter's upstream over HTTP (`mandate yea openapi`): the fetch-based Layer of the
// adapter's Upstream service (src/yea/openapi), with fixed headers, a timeout and a bounded body.
export { MAX_BODY, upstreamLayer, type UpstreamOptions } from "./upstream.js"
