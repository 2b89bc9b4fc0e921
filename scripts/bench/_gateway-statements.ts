// `npx tsx scripts/bench/_gateway-statements.ts`: runs the gateway bench (short) with every SQLite statement
// counted by its text (the driver wrapped in this process only), so the statements per call are
// seen beside the profile (issue 29/30: a gateway call costs two atomic steps, ~16 statements).
import Database from "better-sqlite3"
const counts = new Map<string, number>()
const origPrepare = (Database.prototype as any).prepare
;(Database.prototype as any).prepare = function (sql: string) {
  const st = origPrepare.call(this, sql)
  for (const m of ["run", "all", "get"]) {
    const o = st[m].bind(st)
    st[m] = (...a: any[]) => { counts.set(sql.slice(0, 90), (counts.get(sql.slice(0, 90)) ?? 0) + 1); return o(...a) }
  }
  return st
}
const origExec = (Database.prototype as any).exec
;(Database.prototype as any).exec = function (sql: string) { counts.set("EXEC " + sql.slice(0, 60), (counts.get("EXEC " + sql.slice(0, 60)) ?? 0) + 1); return origExec.call(this, sql) }
const { run } = await import("./gateway.js")
await run(["--n", "500", "--seconds", "1"])
console.log([...counts].sort((a, b) => b[1] - a[1]).map(([s, n]) => `${n}\t${s}`).join("\n"))
