// The `petstore` preset: the classic Swagger Petstore (its OpenAPI 3 edition), for trying
// `mandate yea openapi` on an API made for it. Pets, the store's orders and users, written here
// from its public shape. Adding or updating a pet or a user is `low`; deleting a pet and placing
// or cancelling an order `medium`; deleting a user `high`. A user's answer is projected without
// its password and phone. PETSTORE_API_KEY, when set, is sent in the `api_key` header the
// Petstore's own document declares.
import type { Preset } from "../preset.js"
import { inPath, inQuery, int, list, object, oneOf, operation, str } from "./document.js"

const category = object({ id: int(), name: str() })
const tag = object({ id: int(), name: str() })
const pet = object({ id: int(), name: str(), category, photoUrls: list(str()), tags: list(tag), status: oneOf(["available", "pending", "sold"]) }, ["name", "photoUrls"])
const order = object({ id: int(), petId: int(), quantity: int(), shipDate: { type: "string", format: "date-time" }, status: oneOf(["placed", "approved", "delivered"]), complete: { type: "boolean" } })
const user = object({ id: int(), username: str(), firstName: str(), lastName: str(), email: str(), password: str(), phone: str(), userStatus: int() })
const petId = inPath("petId", int("the pet's id"))
const orderId = inPath("orderId", int("the order's id"))
const username = inPath("username", str())

const spec = {
  openapi: "3.0.3",
  info: { title: "Swagger Petstore", description: "The Swagger Petstore: pets, orders and users (a preset)", version: "1.0.x" },
  servers: [{ url: "https://petstore3.swagger.io/api/v3" }],
  paths: {
    "/pet": {
      post: operation("addPet", "Add a pet to the store", [], { required: true, schema: pet }),
      put: operation("updatePet", "Update an existing pet", [], { required: true, schema: pet })
    },
    "/pet/findByStatus": { get: operation("findPetsByStatus", "Pets by status", [inQuery("status", oneOf(["available", "pending", "sold"]), true)]) },
    "/pet/findByTags": { get: operation("findPetsByTags", "Pets by tags", [inQuery("tags", str("comma-separated tag names"), true)]) },
    "/pet/{petId}": {
      get: operation("getPetById", "A pet", [petId]),
      delete: operation("deletePet", "Delete a pet", [petId])
    },
    "/store/inventory": { get: operation("getInventory", "How many pets in each status", []) },
    "/store/order": { post: operation("placeOrder", "Order a pet", [], { required: true, schema: order }) },
    "/store/order/{orderId}": {
      get: operation("getOrderById", "An order", [orderId]),
      delete: operation("deleteOrder", "Cancel an order", [orderId])
    },
    "/user": { post: operation("createUser", "Create a user", [], { required: true, schema: user }) },
    "/user/{username}": {
      get: operation("getUserByName", "A user", [username]),
      delete: operation("deleteUser", "Delete a user", [username])
    }
  }
}

const petFields = ["id", "name", "status", "category=category.name", "tags=tags[].name"]
const orderFields = ["id", "petId", "quantity", "status", "complete"]

export const petstore: Preset = {
  name: "petstore",
  summary: "the Swagger Petstore's pets, orders and users, for trying things (PETSTORE_API_KEY)",
  id: "petstore3.swagger.io",
  prefix: "petstore",
  spec,
  operations: {
    findPetsByStatus: { projection: { fields: petFields } },
    findPetsByTags: { projection: { fields: petFields } },
    getPetById: { projection: { fields: petFields } },
    getInventory: {},
    getOrderById: { projection: { fields: orderFields } },
    getUserByName: { projection: { fields: ["username", "firstName", "lastName", "email"] } },
    addPet: { risk: "low", projection: { fields: petFields } },
    updatePet: { risk: "low", projection: { fields: petFields } },
    deletePet: { risk: "medium" },
    placeOrder: { risk: "medium", projection: { fields: orderFields } },
    deleteOrder: { risk: "medium" },
    createUser: { risk: "low", projection: { fields: ["username"] } },
    deleteUser: { risk: "high" }
  },
  credentials: [{ env: "PETSTORE_API_KEY", header: "api_key" }]
}
