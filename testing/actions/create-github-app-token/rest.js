// GitHub's REST API for the stand-in: JSON over HTTPS (the test CA reaches Node as NODE_EXTRA_CA_CERTS).
"use strict";

function input(name) {
  return (process.env[`INPUT_${name.toUpperCase()}`] || "").trim();
}

async function api(method, path, authorization, body) {
  const base = (input("github-api-url") || process.env.GITHUB_API_URL).replace(/\/$/, "");
  const answer = await fetch(base + path, {
    method,
    headers: { authorization, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28",
      "user-agent": "create-github-app-token-stand-in", ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: HTTP ${answer.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : {};
}

module.exports = { api, input };
