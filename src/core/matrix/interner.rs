//! Interning: names (models, benchmarks, configurations, answer texts) to dense `u32` ids,
//! and items (a benchmark and an item id) to item numbers. A cell then holds integers only;
//! the builder renumbers ids into name order when it finishes.

use rustc_hash::FxHashMap;

/// Interned strings with dense `u32` ids.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    map: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl Interner {
    /// An interner of these names, ids in the order given; `None` when a name repeats.
    pub(crate) fn from_names(names: Vec<Box<str>>) -> Option<Self> {
        let mut map = FxHashMap::default();
        for (i, n) in names.iter().enumerate() {
            if map.insert(n.clone(), i as u32).is_some() {
                return None;
            }
        }
        Some(Interner { map, names })
    }

    pub(crate) fn names_slice(&self) -> &[Box<str>] {
        &self.names
    }

    /// The id of `s`, a new one (the next dense id) the first time `s` is seen.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned, without adding it.
    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }

    /// The name an id stands for; panics on an id this interner never gave.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// How many distinct names there are (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when no name was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names in id order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(|s| &**s)
    }

    /// Forgets every name but keeps the allocations, for a builder part reused block after
    /// block.
    pub(super) fn clear(&mut self) {
        self.map.clear();
        self.names.clear();
    }

    /// Renumbers ids into name order; returns the map from old id to new id.
    pub(super) fn sort(&mut self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_by(|&a, &b| self.names[a as usize].cmp(&self.names[b as usize]));
        let mut remap = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        let mut names: Vec<Box<str>> = Vec::with_capacity(self.names.len());
        for &old in &order {
            names.push(std::mem::take(&mut self.names[old as usize]));
        }
        self.names = names;
        for v in self.map.values_mut() {
            *v = remap[*v as usize];
        }
        remap
    }
}

/// An item: `(benchmark, item_id)`.
#[derive(Debug, Clone)]
pub struct Item {
    /// Id of the benchmark the item belongs to.
    pub benchmark: u32,
    /// The item's id within its benchmark, as given in the cells.
    pub id: Box<str>,
}

/// Items by (benchmark, item id). It holds item numbers only; the ids are kept once, in
/// the items, and compared there.
#[derive(Debug, Clone, Default)]
pub(crate) struct ItemIndex(hashbrown::HashTable<u32>);

fn item_hash(benchmark: u32, id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one((benchmark, id))
}

impl ItemIndex {
    pub(crate) fn find(&self, items: &[Item], benchmark: u32, id: &str) -> Option<u32> {
        self.0
            .find(item_hash(benchmark, id), |&i| {
                let it = &items[i as usize];
                it.benchmark == benchmark && crate::core::text::same(&it.id, id)
            })
            .copied()
    }

    /// Adds item `i` of `items` (not yet in the index).
    pub(crate) fn insert(&mut self, items: &[Item], i: u32) {
        let hash = |&j: &u32| {
            let it = &items[j as usize];
            item_hash(it.benchmark, &it.id)
        };
        self.0.insert_unique(hash(&i), i, hash);
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intern_gives_one_id_per_name() {
        let mut it = Interner::default();
        let a = it.intern("qwen");
        let b = it.intern("llava");
        assert_eq!((a, b), (0, 1));
        assert_eq!(it.intern("qwen"), a);
        assert_eq!(it.intern("llava"), b);
        assert_eq!(it.len(), 2);
        assert_eq!(it.get("qwen"), Some(0));
        assert_eq!(it.get("gemma"), None);
        assert_eq!(it.name(b), "llava");
    }

    #[test]
    fn interner_names_in_order_first_seen() {
        let mut it = Interner::default();
        for n in ["c", "a", "c", "b", "a"] {
            it.intern(n);
        }
        assert_eq!(it.names().collect::<Vec<_>>(), ["c", "a", "b"]);
    }

    #[test]
    fn interner_sort_renumbers_into_name_order() {
        let mut it = Interner::default();
        for n in ["c", "a", "b"] {
            it.intern(n);
        }
        let remap = it.sort();
        // Old ids c=0, a=1, b=2 become c=2, a=0, b=1.
        assert_eq!(remap, [2, 0, 1]);
        assert_eq!(it.names().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(it.get("c"), Some(2));
        assert_eq!(it.intern("a"), 0);
    }

    #[test]
    fn interner_from_names_rejects_a_repeat() {
        let names = |v: &[&str]| v.iter().map(|&s| Box::from(s)).collect::<Vec<Box<str>>>();
        let it = Interner::from_names(names(&["x", "y"])).expect("distinct");
        assert_eq!(it.get("y"), Some(1));
        assert!(Interner::from_names(names(&["x", "y", "x"])).is_none());
    }

    #[test]
    fn item_index_tells_benchmarks_apart() {
        let items = vec![
            Item {
                benchmark: 0,
                id: "q1".into(),
            },
            Item {
                benchmark: 1,
                id: "q1".into(),
            },
        ];
        let mut index = ItemIndex::default();
        index.insert(&items, 0);
        assert_eq!(index.find(&items, 0, "q1"), Some(0));
        assert_eq!(index.find(&items, 1, "q1"), None);
        index.insert(&items, 1);
        assert_eq!(index.find(&items, 1, "q1"), Some(1));
        assert_eq!(index.find(&items, 0, "q2"), None);
    }
}
