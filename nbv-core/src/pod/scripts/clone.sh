# Clones $NBV_GIT_URL at $NBV_GIT_REF into $NBV_WORKSPACE/$NBV_CHECKOUT (`repo` for
# the notebook's repository, `golden` for the golden notebook's).
#
# nbv runs this script as `sh -c <script>` in the validation pod's init container.
# Every value of the job comes from the environment and is only ever expanded inside
# double quotes, so no URL, ref or credential is parsed by the shell, and credentials
# never appear in a command line, a URL or a file.
set -eu

repo="$NBV_WORKSPACE/${NBV_CHECKOUT:-repo}"
ssh_dir=/etc/nbv/git-ssh

case "$NBV_GIT_REF" in
  -*) printf 'nbv: the ref %s starts with "-"; git would read it as an option\n' "$NBV_GIT_REF" >&2
      exit 2 ;;
esac

# The notebook container runs as another user than this one: everything created here
# (the checkout, which notebooks write next to, and the notebook's home) must be
# writable by it. The workspace is an emptyDir private to the pod.
umask 0000
# The notebook's home: images run as users whose own home may not be writable.
mkdir -p "$NBV_WORKSPACE/home"

if [ -n "${NBV_GIT_PASSWORD:-}${NBV_GIT_TOKEN:-}" ]; then
  # Answers git's credential requests from the environment: username (a token alone
  # works with any username, e.g. GitHub's x-access-token), then password or token.
  helper='!f() { test "$1" = get || exit 0; printf "username=%s\n" "${NBV_GIT_USERNAME:-x-access-token}"; printf "password=%s\n" "${NBV_GIT_PASSWORD:-$NBV_GIT_TOKEN}"; }; f'
else
  helper=''
fi

if [ -f "$ssh_dir/ssh-privatekey" ]; then
  if [ -s "$ssh_dir/known_hosts" ]; then
    hosts="-o StrictHostKeyChecking=yes -o UserKnownHostsFile=$ssh_dir/known_hosts"
  else
    echo "nbv: the credentials Secret has no known_hosts; the server's host key is not verified" >&2
    hosts="-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
  fi
  export GIT_SSH_COMMAND="ssh -i $ssh_dir/ssh-privatekey -o IdentitiesOnly=yes -o BatchMode=yes $hosts"
fi

git -c init.defaultBranch=nbv init --quiet "$repo"
cd "$repo"
git config credential.helper "$helper"
git remote add -- origin "$NBV_GIT_URL"
if git fetch --quiet --depth 1 -- origin "$NBV_GIT_REF"; then
  git checkout --quiet --detach FETCH_HEAD
else
  # Some servers refuse a shallow fetch of a commit id; fetch everything and look it up.
  printf 'nbv: fetching %s alone failed; fetching the whole repository\n' "$NBV_GIT_REF" >&2
  git fetch --quiet --tags -- origin
  git checkout --quiet --detach "$NBV_GIT_REF^{commit}"
fi
printf 'nbv: checked out %s at commit %s\n' "$NBV_GIT_REF" "$(git rev-parse HEAD)"
