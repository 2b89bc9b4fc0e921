// The `github` preset: sixteen operations of the GitHub REST API, written here from its public
// shape (paths, parameters and operationIds as GitHub names them), with the risks of the reference
// openapi.md "Presets" table: reads are `ask`; creating or updating an issue, commenting and adding
// labels are `low`; opening a pull request `medium`; merging one `high`. With a grant whose risk
// ceiling is `low` (the starter policy), opening or merging a PR always asks the person first.
//
// GITHUB_TOKEN, when set, is sent as `Authorization: Bearer …`; without it the preset still runs
// and does what works anonymously.
import type { Preset } from "../preset.js"
import { bool, inPath, inQuery, int, list, object, oneOf, operation, str } from "./document.js"

const owner = inPath("owner", str("the account that owns the repository"))
const repo = inPath("repo", str("the repository's name, without .git"))
const issueNumber = inPath("issue_number", int("the issue's (or pull request's) number"))
const pullNumber = inPath("pull_number", int("the pull request's number"))
const perPage = inQuery("per_page", int("results per page, at most 100"))
const page = inQuery("page", int("the page, from 1"))
const state = inQuery("state", oneOf(["open", "closed", "all"]))

const spec = {
  openapi: "3.0.3",
  info: { title: "GitHub", description: "Repositories, issues and pull requests on GitHub (a preset: 16 operations)", version: "2022-11-28" },
  servers: [{ url: "https://api.github.com" }],
  paths: {
    "/user": { get: operation("users/get-authenticated", "The authenticated user", []) },
    "/user/repos": { get: operation("repos/list-for-authenticated-user", "Your repositories", [inQuery("sort", oneOf(["created", "updated", "pushed", "full_name"])), perPage, page]) },
    "/repos/{owner}/{repo}": { get: operation("repos/get", "A repository", [owner, repo]) },
    "/repos/{owner}/{repo}/contents/{path}": {
      get: operation("repos/get-content", "A file's content (base64) or a folder's listing", [owner, repo, { ...inPath("path", str("the file's path in the repository")), "x-multi-segment": true }, inQuery("ref", str("a branch, tag or commit"))])
    },
    "/repos/{owner}/{repo}/issues": {
      get: operation("issues/list-for-repo", "A repository's issues (and pull requests)", [owner, repo, state, inQuery("labels", str("comma-separated label names")), perPage, page]),
      post: operation("issues/create", "Open an issue", [owner, repo], {
        required: true,
        schema: object({ title: str(), body: str(), labels: list(str()), assignees: list(str()) }, ["title"])
      })
    },
    "/repos/{owner}/{repo}/issues/{issue_number}": {
      get: operation("issues/get", "An issue", [owner, repo, issueNumber]),
      patch: operation("issues/update", "Edit an issue (title, body, state, labels)", [owner, repo, issueNumber], {
        required: true,
        schema: object({ title: str(), body: str(), state: oneOf(["open", "closed"]), labels: list(str()) })
      })
    },
    "/repos/{owner}/{repo}/issues/{issue_number}/comments": {
      get: operation("issues/list-comments", "An issue's comments", [owner, repo, issueNumber, perPage, page]),
      post: operation("issues/create-comment", "Comment on an issue or pull request", [owner, repo, issueNumber], { required: true, schema: object({ body: str() }, ["body"]) })
    },
    "/repos/{owner}/{repo}/issues/{issue_number}/labels": {
      post: operation("issues/add-labels", "Add labels to an issue", [owner, repo, issueNumber], { required: true, schema: object({ labels: list(str()) }, ["labels"]) })
    },
    "/repos/{owner}/{repo}/pulls": {
      get: operation("pulls/list", "A repository's pull requests", [owner, repo, state, perPage, page]),
      post: operation("pulls/create", "Open a pull request", [owner, repo], {
        required: true,
        schema: object({ title: str(), head: str("the branch with the changes"), base: str("the branch to merge into"), body: str(), draft: bool() }, ["title", "head", "base"])
      })
    },
    "/repos/{owner}/{repo}/pulls/{pull_number}": { get: operation("pulls/get", "A pull request", [owner, repo, pullNumber]) },
    "/repos/{owner}/{repo}/pulls/{pull_number}/merge": {
      put: operation("pulls/merge", "Merge a pull request", [owner, repo, pullNumber], {
        required: false,
        schema: object({ commit_title: str(), commit_message: str(), merge_method: oneOf(["merge", "squash", "rebase"]) })
      })
    },
    "/search/issues": {
      get: operation("search/issues-and-pull-requests", "Search issues and pull requests", [inQuery("q", str("GitHub search syntax, e.g. repo:owner/name is:open label:bug"), true), perPage, page])
    }
  }
}

const issueFields = ["number", "title", "state", "author=user.login", "labels=labels[].name", "comments", "updated_at"]
const pullFields = ["number", "title", "state", "author=user.login", "head=head.ref", "base=base.ref", "draft", "updated_at"]

export const github: Preset = {
  name: "github",
  summary: "16 GitHub operations: repos, files, issues, comments, labels, pull requests, search (GITHUB_TOKEN)",
  id: "api.github.com",
  prefix: "github",
  spec,
  operations: {
    "users/get-authenticated": { projection: { fields: ["login", "name", "public_repos"] } },
    "repos/list-for-authenticated-user": { projection: { fields: ["full_name", "private", "description", "default_branch", "updated_at"] } },
    "repos/get": { projection: { fields: ["full_name", "description", "private", "default_branch", "open_issues_count", "stargazers_count", "updated_at"] } },
    "repos/get-content": { projection: { fields: ["type", "path", "size", "sha", "encoding", "content", "name"] } },
    "issues/list-for-repo": { projection: { fields: issueFields } },
    "issues/get": { projection: { fields: [...issueFields, "body", "created_at"] } },
    "issues/list-comments": { projection: { fields: ["id", "author=user.login", "body", "created_at"] } },
    "pulls/list": { projection: { fields: pullFields } },
    "pulls/get": { projection: { fields: [...pullFields, "body", "mergeable", "merged", "additions", "deletions", "changed_files"] } },
    "search/issues-and-pull-requests": { projection: { within: "items", fields: ["number", "title", "state", "author=user.login", "repository=repository_url", "updated_at"] } },
    "issues/create": { risk: "low", projection: { fields: ["number", "title", "state", "url=html_url"] } },
    "issues/update": { risk: "low", projection: { fields: ["number", "title", "state", "url=html_url"] } },
    "issues/create-comment": { risk: "low", projection: { fields: ["id", "url=html_url"] } },
    "issues/add-labels": { risk: "low", projection: { fields: ["name"] } },
    "pulls/create": { risk: "medium", projection: { fields: ["number", "title", "state", "url=html_url"] } },
    "pulls/merge": { risk: "high", projection: { fields: ["merged", "sha", "message"] } }
  },
  credentials: [{ env: "GITHUB_TOKEN", header: "authorization", scheme: "Bearer" }]
}
