//! A cache prefetch hint: loops over a document's features ask for the memory of a feature
//! a few places ahead (its vocabulary slot, its token, its count row), so that the cache
//! misses of a large model overlap instead of coming one after the other. A hint changes
//! no result; on other targets than x86-64 it does nothing.

/// Start loading the cache line that holds `item`.
#[inline]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing Rust can observe; the address is
    // that of a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}
