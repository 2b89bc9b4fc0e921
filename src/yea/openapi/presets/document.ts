// Small builders for the OpenAPI documents the presets ship (github.ts, petstore.ts): each preset's
// document is written out as the OpenAPI 3 JSON it stands for, and these keep the repeated parts
// (a path parameter, a query parameter, a JSON body) from being spelled out forty times.
export type JsonSchema = Readonly<Record<string, unknown>>

export const str = (description?: string): JsonSchema => ({ type: "string", ...(description === undefined ? {} : { description }) })
export const int = (description?: string): JsonSchema => ({ type: "integer", ...(description === undefined ? {} : { description }) })
export const bool = (description?: string): JsonSchema => ({ type: "boolean", ...(description === undefined ? {} : { description }) })
export const oneOf = (values: ReadonlyArray<string>, description?: string): JsonSchema => ({ type: "string", enum: values, ...(description === undefined ? {} : { description }) })
export const list = (items: JsonSchema): JsonSchema => ({ type: "array", items })
export const object = (properties: Readonly<Record<string, JsonSchema>>, required: ReadonlyArray<string> = []): JsonSchema => ({ type: "object", properties, required })

export const inPath = (name: string, schema: JsonSchema = str()) => ({ name, in: "path", required: true, schema })
export const inQuery = (name: string, schema: JsonSchema, required = false) => ({ name, in: "query", required, schema })

/** One operation: its id, summary, parameters and (for a write) its JSON body. */
export const operation = (operationId: string, summary: string, parameters: ReadonlyArray<unknown>, body?: { readonly schema: JsonSchema; readonly required: boolean }) => ({
  operationId,
  summary,
  parameters,
  ...(body === undefined ? {} : { requestBody: { required: body.required, content: { "application/json": { schema: body.schema } } } }),
  responses: { default: { description: "the API's answer" } }
})
