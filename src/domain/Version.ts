/** The service's version, as package.json says it (a test keeps the two equal): the OpenAPI document's `info.version`. */
export const ENGRAM_VERSION = "0.1.0"
