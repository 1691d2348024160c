#!/bin/sh
# The kaniko executor's stand-in (`/kaniko/executor` in its image): it builds nothing
# and pushes nothing, it writes the digest a push would have returned. The digest is
# the SHA-256 of the Dockerfile followed by the requirements.txt beside it (as
# `container::image_digest` computes it for Tekton's build step), so that the same
# prepared files give the same image.
set -eu
dockerfile= context= destination= digest_file=
while [ $# -gt 0 ]; do
  case $1 in
    --dockerfile=*) dockerfile=${1#*=} ;;
    --context=*) context=${1#*=} ;;
    --destination=*) destination=${1#*=} ;;
    --digest-file=*) digest_file=${1#*=} ;;
    --dockerfile|-f) dockerfile=$2; shift ;;
    --context|-c) context=$2; shift ;;
    --destination|-d) destination=$2; shift ;;
    --digest-file) digest_file=$2; shift ;;
    *) ;;
  esac
  shift
done
context=${context#dir://}
[ -n "$destination" ] || { echo "kaniko: --destination is required" >&2; exit 1; }
case $dockerfile in
  "") dockerfile=$context/Dockerfile ;;
  /*) ;;
  *) dockerfile=$context/$dockerfile ;;
esac
[ -f "$dockerfile" ] || { echo "kaniko: no Dockerfile at $dockerfile" >&2; exit 1; }
requirements=$(dirname "$dockerfile")/requirements.txt
if [ -f "$requirements" ]; then
  digest=sha256:$(cat "$dockerfile" "$requirements" | sha256sum | cut -d' ' -f1)
else
  digest=sha256:$(sha256sum < "$dockerfile" | cut -d' ' -f1)
fi
echo "INFO Pushing image to $destination"
echo "INFO Pushed $destination@$digest"
[ -z "$digest_file" ] || printf '%s' "$digest" > "$digest_file"
