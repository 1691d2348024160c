//! Paths inside the repository, as the job names them: relative, `/`-separated, and
//! never leaving the checkout.

/// `path` made canonical (`./a/../b` → `b`), or why it is not a file path inside the
/// repository. Checked lexically: symbolic links are the checkout's reader's concern.
pub(super) fn clean(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err("the path is empty; name a file relative to the repository's root".into());
    }
    if path.contains(['\0', '\n', '\r']) {
        return Err(format!(
            "{path:?} holds a NUL or line break; name a file relative to the repository's root"
        ));
    }
    if path.starts_with('/') {
        return Err(format!(
            "{path:?} is absolute; name the file relative to the repository's root \
             (without the leading /)"
        ));
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" => {
                return Err(format!(
                    "{path:?} has an empty segment (// or a trailing /); name a file"
                ));
            }
            "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(format!(
                        "{path:?} leaves the repository (..); name a file inside it"
                    ));
                }
            }
            name => segments.push(name),
        }
    }
    if segments.is_empty() {
        return Err(format!(
            "{path:?} is the repository's root, not a file; name a file inside it"
        ));
    }
    Ok(segments.join("/"))
}

/// The directory of a clean `path`: `""` for the repository's root.
pub(super) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `name` in the directory `dir` (`""` being the repository's root).
pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_dots_inside_the_repository() {
        assert_eq!(clean("./a/../b/r.txt").unwrap(), "b/r.txt");
        assert_eq!(clean("requirements.txt").unwrap(), "requirements.txt");
    }

    #[test]
    fn refuses_what_is_not_a_file_inside() {
        for bad in [
            "",
            "/etc/passwd",
            "../r.txt",
            "a/../../r.txt",
            "a//b",
            "a/",
            ".",
            "a/..",
            "a\nb",
            "a\0",
        ] {
            assert!(clean(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parent_and_join_round_trip() {
        assert_eq!(parent("a/b/c.ipynb"), "a/b");
        assert_eq!(parent("c.ipynb"), "");
        assert_eq!(join("", "requirements.txt"), "requirements.txt");
        assert_eq!(join("a/b", "requirements.txt"), "a/b/requirements.txt");
    }
}
