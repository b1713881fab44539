//! Label sets as the caches keep them, and the index from `label=value` to what carries it.
//!
//! A `BTreeMap<String, String>` of two labels allocates a node of eleven slots (about 540
//! bytes) besides its strings; the pods of one workload all carry the same labels. So the
//! caches keep each distinct label set once, as a sorted slice, and index those sets, not
//! the objects.

use std::collections::hash_map::{Entry, RandomState};
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

use foresight_api::selector::Selector;

/// A label set: the pairs sorted by key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Labels(Box<[(Box<str>, Box<str>)]>);

impl From<BTreeMap<String, String>> for Labels {
    fn from(map: BTreeMap<String, String>) -> Self {
        // In key order, as the map iterates.
        Labels(
            map.into_iter()
                .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
                .collect(),
        )
    }
}

impl Labels {
    /// The value of `key`, if the set has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.0[i].1)
    }

    /// Whether `selector` selects this set.
    pub fn matches(&self, selector: &Selector) -> bool {
        selector.matches_with(|k| self.get(k))
    }

    /// The pairs, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    /// How many labels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// From each `label=value` to the items (label sets, or what stands for one) that carry it.
///
/// Filed under the pair's hash, not the pair: the sets hold the text already. Items whose
/// pairs merely share a hash are listed together, so a lookup gives candidates, and whoever
/// looks up matches each candidate's labels against the whole selector (which includes the
/// pair), as selecting does anyway.
#[derive(Clone, Debug)]
pub struct LabelIndex<T> {
    by_pair: HashMap<u64, Vec<T>>,
    hasher: RandomState,
}

impl<T> Default for LabelIndex<T> {
    fn default() -> Self {
        LabelIndex {
            by_pair: HashMap::new(),
            hasher: RandomState::new(),
        }
    }
}

impl<T> LabelIndex<T> {
    fn key(&self, key: &str, value: &str) -> u64 {
        self.hasher.hash_one((key, value))
    }

    /// The hashes of `labels`' pairs, each once: two pairs of one set that share a hash
    /// file the item once, so that a lookup never gives it twice.
    fn keys(&self, labels: &Labels) -> Vec<u64> {
        let mut keys: Vec<u64> = labels.iter().map(|(k, v)| self.key(k, v)).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// Files `item` under each of `labels`' pairs.
    pub fn insert(&mut self, labels: &Labels, item: T)
    where
        T: Clone,
    {
        for key in self.keys(labels) {
            // Most pairs lead to one set: no room for more until a second comes.
            let items = self
                .by_pair
                .entry(key)
                .or_insert_with(|| Vec::with_capacity(1));
            items.push(item.clone());
        }
    }

    /// Takes the items `is_it` picks out of each of `labels`' pairs.
    pub fn remove(&mut self, labels: &Labels, is_it: impl Fn(&T) -> bool) {
        for key in self.keys(labels) {
            if let Entry::Occupied(mut items) = self.by_pair.entry(key) {
                items.get_mut().retain(|t| !is_it(t));
                if items.get().is_empty() {
                    items.remove();
                }
            }
        }
    }

    /// The items filed under `key=value`, and any that share its hash.
    pub fn candidates(&self, key: &str, value: &str) -> &[T] {
        self.by_pair
            .get(&self.key(key, value))
            .map_or(&[], Vec::as_slice)
    }

    /// How many items are filed, counting an item once per distinct pair hash.
    pub fn filed(&self) -> usize {
        self.by_pair.values().map(Vec::len).sum()
    }

    /// How many distinct pair hashes are filed.
    pub fn pairs(&self) -> usize {
        self.by_pair.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>()
            .into()
    }

    #[test]
    fn looks_up_and_matches_as_the_map_does() {
        let map: BTreeMap<String, String> = [("tier", "web"), ("app", "shop"), ("a", "")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let set = Labels::from(map.clone());
        assert_eq!(set.get("app"), Some("shop"));
        assert_eq!(set.get("a"), Some(""));
        assert_eq!(set.get("b"), None);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            [("a", ""), ("app", "shop"), ("tier", "web")]
        );
        for text in [
            "app=shop",
            "tier in (web,db),!canary",
            "a",
            "app!=shop",
            "b",
            "",
        ] {
            let s = Selector::parse(text).unwrap();
            assert_eq!(set.matches(&s), s.matches(&map), "{text}");
        }
    }

    #[test]
    fn the_index_files_each_pair_and_forgets_what_is_removed() {
        let web = labels(&[("app", "web"), ("tier", "front")]);
        let db = labels(&[("app", "db"), ("tier", "back")]);
        let mut index = LabelIndex::default();
        index.insert(&web, 1);
        index.insert(&db, 2);
        index.insert(&labels(&[("app", "web")]), 3);
        assert_eq!(index.candidates("app", "web"), [1, 3]);
        assert_eq!(index.candidates("tier", "back"), [2]);
        assert!(index.candidates("app", "none").is_empty());
        // `app=w` and `eb` is not `app=web`.
        assert!(index.candidates("app=w", "eb").is_empty());
        assert_eq!((index.filed(), index.pairs()), (5, 4));
        index.remove(&web, |t| *t == 1);
        assert_eq!(index.candidates("app", "web"), [3]);
        assert!(index.candidates("tier", "front").is_empty());
        assert_eq!((index.filed(), index.pairs()), (3, 3));
    }
}
