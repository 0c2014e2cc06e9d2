//! One hub repository at one revision ([`RepoType`], `Remote`): its kind, its id and revision
//! checked before either becomes a path, and how errors name it and its server.

use crate::error::{Error, Result};
use crate::files::unsafe_path_reason;
use crate::names::{shown, unsafe_repo_reason, unsafe_revision_reason};
use crate::options::HubOptions;

/// The kind of a hub repository; it decides the URL prefix and the cache folder's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoType {
    /// A model repository (`{endpoint}/{repo}`, cache `models--owner--name`).
    Model,
    /// A dataset repository (`{endpoint}/datasets/{repo}`, cache `datasets--owner--name`).
    Dataset,
    /// A Space (`{endpoint}/spaces/{repo}`, cache `spaces--owner--name`).
    Space,
}

impl RepoType {
    /// `model`, `dataset` or `space`, as errors name the kind.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RepoType::Model => "model",
            RepoType::Dataset => "dataset",
            RepoType::Space => "space",
        }
    }

    /// `models`, `datasets` or `spaces`: the cache folder's and the API path's prefix.
    pub(crate) fn plural(self) -> &'static str {
        match self {
            RepoType::Model => "models",
            RepoType::Dataset => "datasets",
            RepoType::Space => "spaces",
        }
    }
}

/// A repository on the hub at a revision, with the options used to reach it.
pub(crate) struct Remote<'a> {
    pub(crate) opts: &'a HubOptions,
    pub(crate) kind: RepoType,
    pub(crate) repo: &'a str,
    pub(crate) revision: &'a str,
}

impl<'a> Remote<'a> {
    /// Checks the repository id and the revision (both become cache paths).
    pub(crate) fn new(
        opts: &'a HubOptions,
        kind: RepoType,
        repo: &'a str,
        revision: &'a str,
    ) -> Result<Self> {
        if let Some(why) = unsafe_repo_reason(repo) {
            return Err(Error::Download(format!(
                "hub {} id {}: not a repository id: {why}",
                kind.name(),
                shown(repo)
            )));
        }
        if let Some(why) = unsafe_revision_reason(revision) {
            return Err(Error::Download(format!(
                "hub {} {repo}: revision {} is not a branch, tag or commit name: {why}",
                kind.name(),
                shown(revision)
            )));
        }
        Ok(Self {
            opts,
            kind,
            repo,
            revision,
        })
    }

    /// `hub model owner/name`, as errors start.
    pub(crate) fn what(&self) -> String {
        format!("hub {} {}", self.kind.name(), self.repo)
    }

    /// An error about something the server sent.
    pub(crate) fn server_error(&self, msg: String) -> Error {
        Error::Download(format!(
            "{}: the server {} {msg}",
            self.what(),
            self.opts.endpoint
        ))
    }

    /// Refuses a name from the server that is not a plain relative path; `source` says where
    /// the name came from.
    pub(crate) fn check_name(&self, name: &str, source: &str) -> Result<()> {
        match unsafe_path_reason(name) {
            None => Ok(()),
            Some(why) => Err(self.server_error(format!(
                "sent the unsafe file name {} in {source} ({why}); refusing to use it as a path",
                shown(name)
            ))),
        }
    }
}
