# Clones $NBV_GIT_URL at $NBV_GIT_REF into $NBV_WORKSPACE/$NBV_CHECKOUT (`repo` for
# the notebook's repository, `golden` for the golden notebook's).
#
# nbv runs this script as `sh -c <script>` in the validation pod's init container.
# Every value of the job comes from the environment and is only ever expanded inside
# double quotes, so no URL, ref or credential is parsed by the shell, and credentials
# never appear in a command line, a URL or a file.
set -eu

repo="$NBV_WORKSPACE/${NBV_CHECKOUT:-repo}"
# The SSH credentials' mount and the user database (tests point them elsewhere).
ssh_dir="${NBV_SSH_DIR:-/etc/nbv/git-ssh}"
passwd="${NBV_PASSWD_FILE:-/etc/passwd}"

case "$NBV_GIT_REF" in
  -*) printf 'nbv: the ref %s starts with "-"; git would read it as an option\n' "$NBV_GIT_REF" >&2
      exit 2 ;;
esac

# The notebook container runs as another user than this one: everything created here
# (the checkout, which notebooks write next to, and the notebook's home) must be
# writable by it. The workspace is an emptyDir private to the pod.
umask 0000
# git writes reflog entries as someone; without a passwd entry for this user it would
# have no name to write.
export GIT_COMMITTER_NAME=nbv GIT_COMMITTER_EMAIL=nbv@localhost
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
  # ssh refuses to run as a user id without an entry in /etc/passwd ("No user exists
  # for uid"), and OpenShift runs containers as an id from the namespace's range that
  # no image knows. Images built for that make /etc/passwd group-writable (the
  # container's group is 0): add the entry there. HTTPS needs no entry.
  uid="$(id -u)"
  if ! cut -d: -f3 "$passwd" 2>/dev/null | grep -qx "$uid"; then
    if [ -w "$passwd" ]; then
      printf 'nbv:x:%s:%s:nbv clone:%s:/sbin/nologin\n' "$uid" "$(id -g)" "$HOME" >>"$passwd"
    else
      printf '%s\n' "nbv: cannot clone over SSH: ssh needs an /etc/passwd entry for user id $uid, and this image has none and cannot add one ($passwd is not writable). Clone over HTTPS, or set the Pod defaults' clone.image to an image that knows the user or has a group-writable /etc/passwd, or clone.user to a user id the image knows and the cluster admits (docs/configuration.md, \"Cloning over SSH on OpenShift\")." >&2
      exit 2
    fi
  fi
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
