// The presets `mandate yea openapi --preset NAME` knows, by name (preset.ts says what one is).
import type { Preset } from "../preset.js"
import { github } from "./github.js"
import { petstore } from "./petstore.js"

export const PRESETS: Readonly<Record<string, Preset>> = { github, petstore }

export const presetNames: ReadonlyArray<string> = Object.keys(PRESETS)

export const presetNamed = (name: string): Preset | undefined => (Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined)
