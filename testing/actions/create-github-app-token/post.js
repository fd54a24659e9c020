// The create-github-app-token stand-in's post step: DELETE /installation/token with the token main.js
// saved (https://docs.github.com/en/rest/apps/installations#revoke-an-installation-access-token), unless
// skip-token-revoke is true or the token has expired; a failure is a warning, as the README says.
"use strict";
const { api, input } = require("./rest.js");

async function post() {
  if (input("skip-token-revoke") === "true") return console.log("Token revocation was skipped");
  const token = process.env.STATE_token;
  if (!token) return console.log("Token is not set");
  const expiresAt = process.env.STATE_expiresAt;
  if (expiresAt && new Date(expiresAt) < new Date()) return console.log("Token expired, skipping token revocation");
  try {
    await api("DELETE", "/installation/token", `token ${token}`);
    console.log("Token revoked");
  } catch (error) {
    console.log(`::warning::Token revocation failed: ${error.message}`);
  }
}

post();
