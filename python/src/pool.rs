//! The batch threads: one rayon pool per thread count, kept between calls (each worker keeps the
//! encoders' thread-local caches warm from batch to batch) and rebuilt after `fork()`.
//!
//! A child of `fork()` inherits the parent's memory but none of its threads: a pool made in the
//! parent has no workers there, and a lock one of them held stays locked. So the pools live in a
//! registry tagged with the process id that made it; a process that finds another process's
//! registry (it is a forked child) never touches it — not even its lock — and installs a fresh
//! one, leaking the old one (it cannot be dropped safely: dropping a pool signals workers that do
//! not exist in the child).

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

struct Registry {
    pid: u32,
    pools: Mutex<HashMap<usize, Arc<ThreadPool>>>,
    /// Id buffers given back (their numpy arrays were freed), for the next batches: fresh memory
    /// costs a page fault per 4 KiB on first write, a fifth of the time of a batch of short
    /// texts on this development VM.
    spare: Mutex<Vec<Vec<u32>>>,
}

static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(std::ptr::null_mut());

/// This process's registry, made on first use and again in a forked child.
fn registry() -> &'static Registry {
    let pid = std::process::id();
    loop {
        let current = REGISTRY.load(Ordering::Acquire);
        // SAFETY: registries are leaked, never freed: a non-null pointer stays valid.
        if let Some(registry) = unsafe { current.as_ref() }
            && registry.pid == pid
        {
            return registry;
        }
        let fresh = Box::into_raw(Box::new(Registry {
            pid,
            pools: Mutex::new(HashMap::new()),
            spare: Mutex::new(Vec::new()),
        }));
        match REGISTRY.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // The old registry (the parent's, or none) is leaked on purpose.
            Ok(_) => return unsafe { &*fresh },
            // Another thread of this process installed one first: use it.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

/// The pool of `threads` workers for this process.
pub fn get(threads: usize) -> Result<Arc<ThreadPool>, String> {
    let registry = registry();
    let mut pools = registry
        .pools
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pool) = pools.get(&threads) {
        return Ok(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("simdtok-{i}"))
        .build()
        .map_err(|e| format!("cannot start {threads} threads: {e}"))?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Ok(pool)
}

/// The number of threads `None` means: the cores this process may run on.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// At most this many spare buffers, each at most [`SPARE_MAX_BYTES`]: memory kept for reuse is
/// bounded (64 MiB).
const SPARE_MAX: usize = 4;
const SPARE_MAX_BYTES: usize = 16 << 20;
/// Smaller buffers are left to the allocator (it reuses small blocks without faults).
const SPARE_MIN_BYTES: usize = 256 << 10;

/// An empty vector with room for `capacity` ids: a spare one when one is large enough.
pub fn take_ids(capacity: usize) -> Vec<u32> {
    if capacity * 4 >= SPARE_MIN_BYTES && capacity * 4 <= SPARE_MAX_BYTES {
        let mut spare = registry()
            .spare
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // The smallest spare that is large enough.
        if let Some(i) = (0..spare.len())
            .filter(|&i| spare[i].capacity() >= capacity)
            .min_by_key(|&i| spare[i].capacity())
        {
            let mut v = spare.swap_remove(i);
            v.clear();
            return v;
        }
    }
    Vec::with_capacity(capacity)
}

/// Keeps `ids` for a later batch (or frees it).
pub fn give_ids(ids: Vec<u32>) {
    let bytes = ids.capacity() * 4;
    if !(SPARE_MIN_BYTES..=SPARE_MAX_BYTES).contains(&bytes) {
        return;
    }
    let mut spare = registry()
        .spare
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if spare.len() == SPARE_MAX {
        // Replace the smallest, if this one is larger.
        let smallest = (0..spare.len())
            .min_by_key(|&i| spare[i].capacity())
            .unwrap();
        if spare[smallest].capacity() < ids.capacity() {
            spare[smallest] = ids;
        }
    } else {
        spare.push(ids);
    }
}
