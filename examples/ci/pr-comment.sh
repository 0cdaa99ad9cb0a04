#!/usr/bin/env bash
# One comment per pull request, updated in place: the comment whose first line is MARKER is
# found among all the pull request's comments (every page: the REST list gives 30 a page by
# default, so a search of the first page misses it after 30 comments and posts a second one),
# then edited; without one, it is posted. Needs gh (on GitHub's runners), GH_TOKEN allowed
# `pull-requests: write`, GITHUB_REPOSITORY and PR_NUMBER.
#
#   bash ci/pr-comment.sh '<!-- ddb2bigtable-review -->' comment.md
set -euo pipefail
marker="$1"
body="$2"
if [ "$(head -n 1 "$body")" != "$marker" ]; then
  echo "$body: its first line must be the marker $marker (how the next run finds the comment)" >&2
  exit 2
fi
gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments?per_page=100" \
  --jq ".[] | select(.body | startswith(\"$marker\")) | .id" > .comment-ids
id="$(head -n 1 .comment-ids)"
if [ -n "$id" ]; then
  gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$body" > /dev/null
  echo "comment $id updated"
else
  gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$body" > /dev/null
  echo "comment posted"
fi
