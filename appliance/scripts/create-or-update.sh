#!/bin/sh
# Nexus's create-or-update flow with curl, for larder or a Nexus: for each DIR/<format>/<name>.json,
# GET the repository; POST it when missing, PUT it when present. Safe to run again: a repository
# whose object did not change is left as it is (larder keeps its cache and state).
#   REPO_URL=http://larder:8080 REPO_USER=admin REPO_PASSWORD_FILE=/run/secrets/password create-or-update.sh DIR
# The password goes to curl in a config file, so it never shows in a process listing.
set -eu
dir=${1:?usage: create-or-update.sh DIR (with DIR/<format>/<name>.json)}
url=${REPO_URL:?set REPO_URL, e.g. http://larder:8080}
password_file=${REPO_PASSWORD_FILE:?set REPO_PASSWORD_FILE to a file holding the admin password}
api="${url%/}/service/rest/v1/repositories"

curl_config=$(mktemp)
trap 'rm -f "$curl_config"' EXIT
chmod 600 "$curl_config"
printf 'user = "%s:%s"\n' "${REPO_USER:-admin}" "$(cat "$password_file")" >"$curl_config"

for file in "$dir"/*/*.json; do
  [ -e "$file" ] || { echo "no <format>/<name>.json files in $dir" >&2; exit 1; }
  format=$(basename "$(dirname "$file")")
  name=$(basename "$file" .json)
  status=$(curl -sS -K "$curl_config" -o /dev/null -w '%{http_code}' "$api/$name")
  case $status in
    404)
      curl -fsS -K "$curl_config" -X POST -H 'Content-Type: application/json' --data-binary "@$file" "$api/$format/proxy"
      echo "created $name" ;;
    200)
      curl -fsS -K "$curl_config" -X PUT -H 'Content-Type: application/json' --data-binary "@$file" "$api/$format/proxy/$name"
      echo "updated $name" ;;
    *)
      echo "GET $api/$name answered $status" >&2
      exit 1 ;;
  esac
done
