//! Serde types that accept any JSON value and keep what they understand. lmms-eval's sample
//! lines differ between versions and tasks (a `score` is a dict in one task and a number in
//! another, `filtered_resps` a list or a string), so a field of an unexpected shape must
//! never cost the whole line; these types make every sample struct total over valid JSON.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON scalar, borrowed from the line when it has no escapes; arrays and objects are
/// `Other`, an absent field is `Null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Scalar<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
    #[default]
    Null,
    Other,
}

impl Scalar<'_> {
    /// The value as trimmed text (numbers in decimal); `None` for empty text, null,
    /// booleans, arrays and objects.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Scalar::Str(s) => {
                let t = s.trim();
                (!t.is_empty()).then(|| t.to_string())
            }
            Scalar::Int(i) => Some(i.to_string()),
            Scalar::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9e15 => {
                Some(format!("{}", *f as i64))
            }
            Scalar::Float(f) if f.is_finite() => Some(f.to_string()),
            _ => None,
        }
    }

    /// The trimmed text of a string value, without copying.
    pub(crate) fn str(&self) -> Option<&str> {
        match self {
            Scalar::Str(s) => Some(s.trim()).filter(|t| !t.is_empty()),
            _ => None,
        }
    }

    /// An integer: a JSON integer, a float with no fraction, or a string of digits.
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Scalar::Int(i) => Some(*i),
            Scalar::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9e15 => {
                Some(*f as i64)
            }
            Scalar::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// A finite number, also from a numeric string.
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(f) => Some(*f),
            Scalar::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
        .filter(|f: &f64| f.is_finite())
    }

    /// A recorded correctness: `true`/`false`, or a 0/1 score; anything else (a judge's
    /// -1 for "could not rate", text) is `None`.
    pub(crate) fn truth(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => match self.number() {
                Some(1.0) => Some(true),
                Some(0.0) => Some(false),
                _ => None,
            },
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Scalar<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Str(Cow::Owned(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar<'a>, E> {
                Ok(i64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar<'a>, E> {
                Ok(Scalar::Null)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Scalar<'a>, D2::Error> {
                Scalar::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'a>, A::Error> {
                drain_seq(seq)?;
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'a>, A::Error> {
                drain_map(map)?;
                Ok(Scalar::Other)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A JSON object read as `T`; any other value (a number where another task writes a dict)
/// is `None`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MapOnly<T>(pub Option<T>);

impl<T> Default for MapOnly<T> {
    fn default() -> Self {
        MapOnly(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MapOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = MapOnly<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<MapOnly<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| MapOnly(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<MapOnly<T>, A::Error> {
                drain_seq(seq)?;
                Ok(MapOnly(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<MapOnly<T>, D2::Error> {
                MapOnly::deserialize(d)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<MapOnly<T>, E> {
                Ok(MapOnly(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A list of texts (answer options); anything that is not a list is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TextList(pub Vec<String>);

impl<'de> Deserialize<'de> for TextList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TextList, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Scalar>()? {
                    if let Some(t) = s.text() {
                        out.push(t);
                    }
                }
                Ok(TextList(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TextList, A::Error> {
                drain_map(map)?;
                Ok(TextList::default())
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<TextList, D2::Error> {
                TextList::deserialize(d)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<TextList, E> {
                Ok(TextList::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<TextList, E> {
                Ok(TextList::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// What `filtered_resps` holds: the model's text (a string from v0.7 on, a one-element
/// list before, sometimes nested), or the per-option log-likelihoods of a
/// `multiple_choice` task (`[[-1.2, false], ...]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Resps<'a> {
    Text(Cow<'a, str>),
    Scores(Vec<f64>),
    #[default]
    Other,
}

/// One element of a `filtered_resps` list.
enum Elem<'a> {
    Text(Cow<'a, str>),
    Score(f64),
    Other,
}

struct ElemVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ElemVisitor<'a> {
    type Value = Elem<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Elem<'a>, E> {
        Ok(Elem::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Elem<'a>, E> {
        Ok(Elem::Text(Cow::Owned(v.to_string())))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Elem<'a>, E> {
        Ok(Elem::Score(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Elem<'a>, E> {
        Ok(Elem::Score(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Elem<'a>, E> {
        Ok(Elem::Score(v))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Elem<'a>, E> {
        Ok(Elem::Other)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Elem<'a>, E> {
        Ok(Elem::Other)
    }
    fn visit_none<E: de::Error>(self) -> Result<Elem<'a>, E> {
        Ok(Elem::Other)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Elem<'a>, D::Error> {
        d.deserialize_any(self)
    }
    // A nested list counts by its first element: `[["B"]]` is the text "B", and
    // `[-1.2, false]` (a log-likelihood and whether it was the greedy choice) the score -1.2.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Elem<'a>, A::Error> {
        let first = seq
            .next_element_seed(ElemSeed(PhantomData))?
            .unwrap_or(Elem::Other);
        drain_seq(seq)?;
        Ok(first)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Elem<'a>, A::Error> {
        drain_map(map)?;
        Ok(Elem::Other)
    }
}

struct ElemSeed<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for ElemSeed<'a> {
    type Value = Elem<'a>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Elem<'a>, D::Error> {
        d.deserialize_any(ElemVisitor(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Resps<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Resps<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Resps<'a>, E> {
                Ok(Resps::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Resps<'a>, E> {
                Ok(Resps::Text(Cow::Owned(v.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Resps<'a>, A::Error> {
                let mut scores = Vec::new();
                let mut text = None;
                let mut other = false;
                while let Some(e) = seq.next_element_seed(ElemSeed(PhantomData))? {
                    match e {
                        // Only the first response counts (lmms-eval keeps one per request).
                        Elem::Text(t) if text.is_none() && scores.is_empty() => text = Some(t),
                        Elem::Score(s) => scores.push(s),
                        _ => other = true,
                    }
                }
                Ok(match text {
                    Some(t) => Resps::Text(t),
                    None if !scores.is_empty() && !other => Resps::Scores(scores),
                    None => Resps::Other,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Resps<'a>, A::Error> {
                drain_map(map)?;
                Ok(Resps::Other)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Resps<'a>, D2::Error> {
                Resps::deserialize(d)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Resps<'a>, E> {
                Ok(Resps::Other)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The key of a one-entry object, e.g. egoschema's `submission: {"<video_idx>": 2}`;
/// `None` for anything else.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SoleKey<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for SoleKey<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = SoleKey<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SoleKey<'a>, A::Error> {
                let first = match map.next_key::<Scalar>()? {
                    Some(Scalar::Str(k)) => Some(k),
                    _ => None,
                };
                if first.is_some() {
                    map.next_value::<IgnoredAny>()?;
                }
                let more = map.next_key::<IgnoredAny>()?.is_some();
                if more {
                    map.next_value::<IgnoredAny>()?;
                    drain_map(map)?;
                }
                Ok(SoleKey(if more { None } else { first }))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<SoleKey<'a>, A::Error> {
                drain_seq(seq)?;
                Ok(SoleKey(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<SoleKey<'a>, D2::Error> {
                SoleKey::deserialize(d)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<SoleKey<'a>, E> {
                Ok(SoleKey(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A JSON array of `T`; any other value is `None`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SeqOnly<T>(pub Option<Vec<T>>);

impl<T> Default for SeqOnly<T> {
    fn default() -> Self {
        SeqOnly(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SeqOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = SeqOnly<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SeqOnly<T>, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
                while let Some(t) = seq.next_element()? {
                    out.push(t);
                }
                Ok(SeqOnly(Some(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SeqOnly<T>, A::Error> {
                drain_map(map)?;
                Ok(SeqOnly(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<SeqOnly<T>, D2::Error> {
                SeqOnly::deserialize(d)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<SeqOnly<T>, E> {
                Ok(SeqOnly(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `model_args` as key/value pairs: lmms-eval's `"k=v,k=v"` string (split as its
/// `simple_parse_args_string` does), or an object when a run was started from Python.
/// `None` when absent or of another type.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ModelArgs(pub Option<Vec<(String, String)>>);

impl ModelArgs {
    /// Parses `"pretrained=x,max_frames_num=16"`.
    pub(crate) fn parse(s: &str) -> Vec<(String, String)> {
        s.split(',')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                let k = k.trim();
                (!k.is_empty()).then(|| (k.to_string(), v.trim().to_string()))
            })
            .collect()
    }
}

impl<'de> Deserialize<'de> for ModelArgs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ModelArgs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ModelArgs, E> {
                Ok(ModelArgs(Some(ModelArgs::parse(v))))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelArgs, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<Scalar, Scalar>()? {
                    if let (Some(k), Some(v)) = (k.text(), v.text()) {
                        out.push((k, v));
                    }
                }
                Ok(ModelArgs(Some(out)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ModelArgs, A::Error> {
                drain_seq(seq)?;
                Ok(ModelArgs(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<ModelArgs, D2::Error> {
                ModelArgs::deserialize(d)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<ModelArgs, E> {
                Ok(ModelArgs(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A copy of `text` with the bare `NaN`, `Infinity` and `-Infinity` that Python's `json`
/// writes for non-finite floats replaced by `null`, or `None` when it has none. serde_json
/// rejects those tokens; a stderr of NaN must not hide a run's configuration.
pub(crate) fn python_json_to_json(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut changed = false;
    let mut in_str = false;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if in_str {
            out.push(b);
            if b == b'\\' && i + 1 < text.len() {
                out.push(text[i + 1]);
                i += 2;
                continue;
            }
            in_str = b != b'"';
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let token = [&b"-Infinity"[..], b"Infinity", b"NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t));
        match (b, token) {
            (b'"', _) => {
                in_str = true;
                out.push(b);
                i += 1;
            }
            (_, Some(t)) => {
                out.extend_from_slice(b"null");
                changed = true;
                i += t.len();
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Default)]
    struct Probe<'a> {
        #[serde(default, borrow)]
        s: Scalar<'a>,
        #[serde(default, borrow)]
        r: Resps<'a>,
        #[serde(default)]
        m: MapOnly<Inner>,
        #[serde(default, borrow)]
        k: SoleKey<'a>,
        #[serde(default)]
        l: TextList,
        #[serde(default)]
        a: ModelArgs,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner {
        #[serde(default)]
        x: i64,
    }

    fn probe(text: &str) -> Probe<'_> {
        serde_json::from_str(text).expect("parses")
    }

    #[test]
    fn every_shape_is_accepted() {
        for v in [
            "1",
            "-2",
            "1.5",
            "\"x\"",
            "true",
            "null",
            "[1,[2,{}]]",
            "{\"a\":[1]}",
        ] {
            let text = format!("{{\"s\":{v},\"r\":{v},\"m\":{v},\"k\":{v},\"l\":{v},\"a\":{v}}}");
            let _ = probe(&text);
        }
    }

    #[test]
    fn scalars_keep_text_and_numbers() {
        assert_eq!(probe(r#"{"s":" B "}"#).s.text().as_deref(), Some("B"));
        assert!(matches!(
            probe(r#"{"s":"B"}"#).s,
            Scalar::Str(Cow::Borrowed(_))
        ));
        assert_eq!(probe(r#"{"s":"a\nb"}"#).s.text().as_deref(), Some("a\nb"));
        assert_eq!(probe(r#"{"s":12}"#).s.text().as_deref(), Some("12"));
        assert_eq!(probe(r#"{"s":3.0}"#).s.int(), Some(3));
        assert_eq!(probe(r#"{"s":"3"}"#).s.int(), Some(3));
        assert_eq!(probe(r#"{"s":""}"#).s.text(), None);
        assert_eq!(probe(r#"{"s":1}"#).s.truth(), Some(true));
        assert_eq!(probe(r#"{"s":-1}"#).s.truth(), None);
        assert_eq!(probe(r#"{"s":false}"#).s.truth(), Some(false));
    }

    #[test]
    fn responses_in_every_version() {
        let text = |t: &str| match probe(t).r {
            Resps::Text(s) => Some(s.into_owned()),
            _ => None,
        };
        assert_eq!(text(r#"{"r":["B."]}"#).as_deref(), Some("B."));
        assert_eq!(text(r#"{"r":"B."}"#).as_deref(), Some("B."));
        assert_eq!(text(r#"{"r":[["C"]]}"#).as_deref(), Some("C"));
        assert_eq!(
            probe(r#"{"r":[[-1.5,false],[-0.5,true]]}"#).r,
            Resps::Scores(vec![-1.5, -0.5])
        );
        assert_eq!(probe(r#"{"r":[]}"#).r, Resps::Other);
    }

    #[test]
    fn maps_keys_and_lists() {
        assert_eq!(
            probe(r#"{"m":{"x":4,"y":1}}"#).m,
            MapOnly(Some(Inner { x: 4 }))
        );
        assert_eq!(probe(r#"{"m":4}"#).m, MapOnly(None));
        assert_eq!(probe(r#"{"k":{"vid":2}}"#).k.0.as_deref(), Some("vid"));
        assert_eq!(probe(r#"{"k":{"a":1,"b":2}}"#).k.0, None);
        assert_eq!(probe(r#"{"l":["A. x",2]}"#).l.0, vec!["A. x", "2"]);
        assert_eq!(
            probe(r#"{"a":"pretrained=a/b, max_frames_num=16,,flag"}"#)
                .a
                .0,
            Some(vec![
                ("pretrained".into(), "a/b".into()),
                ("max_frames_num".into(), "16".into())
            ])
        );
        assert_eq!(
            probe(r#"{"a":{"nframes":8}}"#).a.0,
            Some(vec![("nframes".into(), "8".into())])
        );
    }

    #[test]
    fn python_non_finite_floats_become_null() {
        let fixed = python_json_to_json(br#"{"a": NaN, "b": "NaN", "c": [-Infinity, Infinity]}"#)
            .expect("changed");
        assert_eq!(
            String::from_utf8(fixed).expect("utf8"),
            r#"{"a": null, "b": "NaN", "c": [null, null]}"#
        );
        assert_eq!(python_json_to_json(br#"{"a": "x\"NaN"}"#), None);
    }
}
