//! The Python interpreter's cfgs (`Py_3_10` … `Py_3_14`, `Py_LIMITED_API` for an abi3
//! build) for src/python/, which reads some CPython objects in place where the version's
//! layout allows it (feature `python`); nothing for any other build.

fn main() {
    #[cfg(feature = "python")]
    {
        pyo3_build_config::print_expected_cfgs();
        pyo3_build_config::use_pyo3_cfgs();
    }
    println!("cargo:rerun-if-changed=build.rs");
}
