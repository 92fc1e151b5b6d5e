//! streamnb.errors from Rust, and the panic guard of every entry point.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The classes of `streamnb.errors` the core raises.
#[derive(Clone, Copy)]
#[allow(dead_code)] // every class is listed; not every one is raised from Rust yet
pub enum Kind {
    InvalidInput,
    InvalidType,
    InvalidParameter,
    UnknownClass,
    ModelFormat,
    IncompatibleModels,
    Internal,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::InvalidInput => "InvalidInputError",
            Kind::InvalidType => "InvalidTypeError",
            Kind::InvalidParameter => "InvalidParameterError",
            Kind::UnknownClass => "UnknownClassError",
            Kind::ModelFormat => "ModelFormatError",
            Kind::IncompatibleModels => "IncompatibleModelsError",
            Kind::Internal => "InternalError",
        }
    }
}

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A `streamnb.errors` exception of the given kind with this message.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let module = match ERRORS.get_or_try_init(py, || py.import("streamnb.errors").map(Bound::unbind)) {
            Ok(module) => module.bind(py).clone(),
            Err(err) => return err,
        };
        match module
            .getattr(kind.class_name())
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from))
        {
            Ok(class) => PyErr::from_type(class, message),
            Err(err) => err,
        }
    })
}

/// Run `body`, turning a Rust panic into `streamnb.errors.InternalError`.
///
/// Entry points check everything before they change state, so a panic (a bug) leaves the
/// model as it was; see the commit discipline in `store`.
pub fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(error(
                Kind::Internal,
                format!("internal error in streamnb's core (a bug, please report it): {what}"),
            ))
        }
    }
}

/// Panics inside `guard`: lets the tests check that no panic reaches Python as PanicException.
#[pyfunction]
pub fn _panic_for_tests() -> PyResult<()> {
    guard(|| panic!("deliberate panic for the tests"))
}
