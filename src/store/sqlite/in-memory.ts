// SQLite's names for a database with no file of its own (in memory, or a URI): nothing to create
// on disk, and no other process can open it.
export const inMemory = (filename: string): boolean => filename === "" || filename === ":memory:" || filename.startsWith("file:")
