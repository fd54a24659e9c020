// The create-github-app-token stand-in's main step (action.yml says from what it is written).
// 1. A JSON Web Token for the app (RS256, iss the client or app id, iat 60 s back for clock drift, exp
//    10 minutes on: https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
// 2. The installation: GET /repos/{owner}/{first repository}/installation, or GET /users/{owner}/installation
//    when no repository is named (owner and repositories default to this repository, as the README says).
// 3. POST /app/installations/{id}/access_tokens {repositories, permissions}: a token scoped to the named
//    repositories and to the permission-* inputs given (none given: the installation's own).
// Outputs token, installation-id, app-slug; the token is masked and saved for post.js to revoke.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const { api, input } = require("./rest.js");

function jwt(appId, privateKey) {
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = part({ alg: "RS256", typ: "JWT" }) + "." + part({ iat: now - 60, exp: now + 600, iss: appId });
  const signature = crypto.sign("RSA-SHA256", Buffer.from(unsigned), privateKey.replace(/\\n/g, "\n"));
  return unsigned + "." + signature.toString("base64url");
}

async function main() {
  const appId = input("client-id") || input("app-id");
  if (!appId) throw new Error("Either 'client-id' or 'app-id' input must be set");
  const privateKey = input("private-key");
  if (!privateKey) throw new Error("Input required and not supplied: private-key");
  let owner = input("owner");
  let repositories = input("repositories").split(/[\n,]+/).map((r) => r.trim()).filter(Boolean);
  if (!owner && repositories.length === 0) {
    [owner, repositories] = [process.env.GITHUB_REPOSITORY.split("/")[0], [process.env.GITHUB_REPOSITORY.split("/")[1]]];
  } else if (!owner) {
    owner = process.env.GITHUB_REPOSITORY_OWNER;
  }
  const permissions = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("INPUT_PERMISSION-") && value) permissions[name.slice(17).toLowerCase().replace(/-/g, "_")] = value;
  }
  const bearer = "Bearer " + jwt(appId, privateKey);
  const installation = repositories.length
    ? await api("GET", `/repos/${owner}/${repositories[0]}/installation`, bearer)
    : await api("GET", `/users/${owner}/installation`, bearer);
  const body = {};
  if (repositories.length) body.repositories = repositories;
  if (Object.keys(permissions).length) body.permissions = permissions;
  const created = await api("POST", `/app/installations/${installation.id}/access_tokens`, bearer, body);
  console.log(`::add-mask::${created.token}`);
  fs.appendFileSync(process.env.GITHUB_OUTPUT,
    `token=${created.token}\ninstallation-id=${installation.id}\napp-slug=${installation.app_slug || ""}\n`);
  if (input("skip-token-revoke") !== "true") {
    fs.appendFileSync(process.env.GITHUB_STATE, `token=${created.token}\nexpiresAt=${created.expires_at || ""}\n`);
  }
  console.log(`Token created for ${owner}/${repositories.join(",") || "*"} with ${JSON.stringify(permissions)}`);
}

main().catch((error) => {
  console.log(`::error::${error.message}`);
  process.exitCode = 1;
});
