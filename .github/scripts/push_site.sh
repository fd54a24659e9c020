#!/usr/bin/env bash
# Pushes a built site to a separate public repository, for a plan that cannot publish GitHub Pages from a
# private repository: that repository's Pages then publish its main branch. Only the built site goes there
# (check_site.sh), as one commit per change on top of the builds before it; the key (DEPLOY_KEY, a deploy
# key with write access to that repository alone) can reach nothing else.
#
#   DEPLOY_KEY="$(cat key)" bash .github/scripts/push_site.sh _site git@github.com:activaterights/takedownwatch-site.git
set -euo pipefail
site=$(cd "${1:?usage: push_site.sh SITE_DIR REMOTE}" && pwd)
remote=${2:?usage: push_site.sh SITE_DIR REMOTE}
bash "$(dirname "$0")/check_site.sh" "$site"
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
if [[ -n "${DEPLOY_KEY:-}" ]]; then
  (umask 077 && printf '%s\n' "$DEPLOY_KEY" > "$work/key")
  # GitHub's published host key (docs.github.com: "GitHub's SSH key fingerprints"), never one learnt on the way.
  echo "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl" > "$work/known_hosts"
  export GIT_SSH_COMMAND="ssh -i $work/key -o IdentitiesOnly=yes -o UserKnownHostsFile=$work/known_hosts -o StrictHostKeyChecking=yes"
fi
git clone --quiet --depth 1 "$remote" "$work/site"
find "$work/site" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf -- {} +
cp -R "$site"/. "$work/site"/
touch "$work/site/.nojekyll"  # the files as built, not read through Jekyll
cd "$work/site"
git add -A
if git diff --cached --quiet; then
  echo "site unchanged: nothing to push"
  exit 0
fi
git -c user.name="takedownwatch[bot]" -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
  commit --quiet -m "site: built from the published figures of $(date -u +%Y-%m-%dT%H:%MZ)"
git push --quiet origin HEAD:main
echo "pushed the site to $remote"
