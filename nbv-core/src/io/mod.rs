//! The I/O the core asks a shell for, and the answers it takes: the closed set of
//! requests a sans-IO machine of nbv-core can make (kube-runtime's watcher has the
//! same shape). A machine says what it needs ([`Request`]); the shell carries it out
//! with one API call or one read of a watch cache and gives back what came of it
//! ([`Response`]), classified once by the core ([`ApiAnswer`]).
//!
//! Every object is addressed the same way ([`ObjectRef`]) and travels as JSON, so the
//! shell maps each request kind to exactly one call, whatever the object's kind: a
//! custom resource's plural is its kind, lowercased and pluralised by English rules
//! (kube's `ApiResource::from_gvk`).
//!
//! # Examples
//!
//! A shell answers each request as its cluster does:
//!
//! ```
//! use nbv_core::io::{ObjectRef, Request, Response};
//! use nbv_core::api_answer::ApiAnswer;
//!
//! let web = ObjectRef::namespaced("apps/v1", "Deployment", "ml", "web");
//! let request = Request::Get(web.clone());
//! let response = match &request {
//!     Request::Get(object) if object.name == "web" => Response::Object(None),
//!     _ => Response::Failed(ApiAnswer::no_answer("unexpected")),
//! };
//! assert_eq!(response, Response::Object(None), "not found is an answer, not an error");
//! assert_eq!(request.to_string(), "GET Deployment ml/web");
//! ```

mod object;
mod request;
mod response;
mod step;

pub use object::ObjectRef;
pub use request::{Request, Subresource};
pub use response::Response;
pub use step::Step;

pub use crate::api_answer::ApiAnswer;
