//! The ghost exchanges of a [`Grid`]: blocking and begin/end, safe and
//! raw, the cache of datatypes per field set and the identity of the
//! last call (its name and fingerprint, kept on the hot path).

use std::rc::Rc;

use super::super::datatypes::{offsets, post_exchange, PeerTypes};
use super::super::{Field, Layout, RawField};
use super::Grid;
use crate::error::{Error, Result};
use crate::runtime::clock::{polling, waiting};
use crate::runtime::halo::{self, Posted};

/// The key of a cached field set: per field, its offset from the first
/// field's buffer, element size and padding.
pub(super) type FieldKey = Vec<(isize, usize, [usize; 3])>;

/// Cached field sets per layout (the oldest is dropped beyond this).
const CACHED_FIELD_SETS: usize = 8;

/// A ghost exchange started by [`Grid::exchange_begin_raw`]: end it with
/// [`Grid::exchange_end_raw`] before touching the fields' ghost cells (and
/// before any other call on the grid but exchanges).
#[derive(Debug)]
pub struct PendingExchange {
    posted: Posted,
    what: Rc<str>,
    /// The datatypes of the messages (kept until the end).
    _types: Rc<PeerTypes>,
}

/// A ghost exchange of the safe API in flight ([`Grid::exchange_begin`]):
/// the fields stay borrowed until [`Exchange::end`] (or drop, which ends it
/// and drops its result).
#[derive(Debug)]
pub struct Exchange<'a> {
    grid: &'a mut Grid,
    pending: Option<PendingExchange>,
}

impl Exchange<'_> {
    /// Waits for the exchange: the ghost cells are filled (same errors as
    /// [`Grid::exchange`]).
    pub fn end(mut self) -> Result<()> {
        match self.pending.take() {
            Some(p) => self.grid.exchange_end_raw(p),
            None => Ok(()),
        }
    }
}

impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pending.take() {
            let _ = self.grid.exchange_end_raw(p);
        }
    }
}

/// The last exchange call's identity, kept while the next calls are the
/// same (element sizes and cell types): its name and fingerprint.
#[derive(Debug)]
pub(super) struct LastCall {
    sizes: Vec<usize>,
    types: Vec<String>,
    what: Rc<str>,
    fingerprint: u64,
}

impl Grid {
    /// An exchange this rank cannot take part in (`why`: e.g. its field
    /// list is unreadable): it takes the exchange's place in the sequence
    /// and joins the escalation at once, so that every rank involved
    /// returns `why` (`halo::refuse`). For bindings.
    pub fn refuse_exchange(&mut self, why: Error) -> Error {
        let _w = waiting();
        let what = format!("Grid::exchange (refused: {why})");
        let fp = halo::fingerprint(&what);
        let call = self.core.count_exchange(fp);
        halo::refuse(&*self.core.comm, &self.core.cp, call, &|| what.clone(), why)
    }

    /// The exchange call of `fields` as errors name it, and its
    /// fingerprint: kept from the last exchange when the fields' element
    /// sizes and cell types are the same (the hot path formats nothing).
    fn call_of(&mut self, fields: &[RawField], types: &[&str]) -> (Rc<str>, u64) {
        if let Some(c) = &self.last_call {
            if c.sizes.len() == fields.len()
                && c.sizes.iter().zip(fields).all(|(&s, f)| s == f.elem_size)
                && c.types.iter().map(String::as_str).eq(types.iter().copied())
            {
                return (c.what.clone(), c.fingerprint);
            }
        }
        let what: Rc<str> = self.exchange_call(fields, types).into();
        let fingerprint = halo::fingerprint(&what);
        self.last_call = Some(LastCall {
            sizes: fields.iter().map(|f| f.elem_size).collect(),
            types: types.iter().map(|t| t.to_string()).collect(),
            what: what.clone(),
            fingerprint,
        });
        (what, fingerprint)
    }

    /// The exchange call with its must-match arguments, as errors name it:
    /// the cells' types too where the caller names them.
    fn exchange_call(&self, fields: &[RawField], types: &[&str]) -> String {
        let (nx, ny, nz) = self.layout.plan.shape;
        let sizes: Vec<usize> = fields.iter().map(|f| f.elem_size).collect();
        let types = if types.is_empty() {
            String::new()
        } else {
            format!(" ({})", types.join(", "))
        };
        format!(
            "Grid::exchange on a {nx}x{ny}x{nz} grid, {}-point stencil, ghost {}, {} fields of {sizes:?}-byte cells{types}",
            self.layout.stencil.points(),
            self.layout.stencil.ghost,
            fields.len(),
        )
    }

    /// Fills the ghost cells of every field from the neighbours (one
    /// message to and from each, nothing through the root; see the
    /// module's documentation). Ghost cells outside the grid are left
    /// untouched. Every rank must call it with the same number of fields,
    /// element sizes and element types (compared where they are primitive
    /// numbers: `f64` against `i64`; paddings may differ); a difference,
    /// or a wrong slice length on one rank, is the same error on every rank
    /// involved.
    pub fn exchange(&mut self, fields: &mut [Field<'_>]) -> Result<()> {
        self.exchange_begin(fields)?.end()
    }

    /// Starts [`Grid::exchange`]; the fields stay borrowed until
    /// [`Exchange::end`]. (To compute on a field's interior meanwhile, use
    /// [`Grid::exchange_begin_raw`].)
    pub fn exchange_begin<'a>(&'a mut self, fields: &'a mut [Field<'_>]) -> Result<Exchange<'a>> {
        let raw: Vec<RawField> = fields.iter().map(|f| f.raw).collect();
        let lens: Vec<usize> = fields.iter().map(|f| f.len).collect();
        // Named only when every field's type is (see `Field::new`).
        let types: Vec<&str> = if fields.iter().all(|f| !f.cell_type.is_empty()) {
            fields.iter().map(|f| f.cell_type).collect()
        } else {
            Vec::new()
        };
        // SAFETY: the fields' slices are borrowed by the returned Exchange
        // until it ends (its drop ends it too); their lengths are checked.
        let pending = unsafe { self.begin(&raw, Some(&lens), &types) }?;
        Ok(Exchange {
            grid: self,
            pending: Some(pending),
        })
    }

    /// Starts a ghost exchange of the raw fields `fields` (as
    /// [`Grid::exchange`]); the caller may compute on cells the messages do
    /// not touch (this rank's cells outside the regions sent: reading them
    /// all is fine, writing the sent ones is not) until
    /// [`Grid::exchange_end_raw`].
    ///
    /// # Safety
    /// Each field's `data` points to [`Grid::padded_len`]`(pad)` cells of
    /// `elem_size` bytes, valid until the exchange ends; the ghost cells it
    /// receives are not accessed until then.
    pub unsafe fn exchange_begin_raw(&mut self, fields: &[RawField]) -> Result<PendingExchange> {
        // SAFETY: the caller's contract.
        unsafe { self.begin(fields, None, &[]) }
    }

    /// [`Grid::exchange_begin_raw`] with the name of each field's cell type
    /// (`types[k]` for `fields[k]`, e.g. a NumPy dtype): ranks whose types
    /// differ get the same error on every rank, as for element sizes that
    /// differ — cells of one size but another type (`f64` against `i64`)
    /// would otherwise be exchanged as bytes. [`Grid::exchange`] names
    /// the Rust types itself.
    ///
    /// # Safety
    /// As [`Grid::exchange_begin_raw`].
    pub unsafe fn exchange_begin_raw_typed(
        &mut self,
        fields: &[RawField],
        types: &[&str],
    ) -> Result<PendingExchange> {
        if types.len() != fields.len() {
            let why = Error::invalid_input(format!(
                "{} fields but {} cell types",
                fields.len(),
                types.len()
            ));
            return Err(self.refuse_exchange(why));
        }
        // SAFETY: the caller's contract.
        unsafe { self.begin(fields, None, types) }
    }

    /// Ends an exchange begun by [`Grid::exchange_begin_raw`] (ghost cells
    /// filled, or the same error on every rank involved).
    pub fn exchange_end_raw(&mut self, x: PendingExchange) -> Result<()> {
        let _w = polling();
        self.in_flight = self.in_flight.saturating_sub(1);
        let PendingExchange { posted, what, .. } = x;
        halo::finish(&*self.core.comm, &self.core.cp, posted, &|| {
            what.to_string()
        })
    }

    /// The shared body of the exchanges: checks, datatypes, posting.
    ///
    /// # Safety
    /// See [`Grid::exchange_begin_raw`]; `lens`, when given, are the
    /// fields' buffer lengths in cells.
    unsafe fn begin(
        &mut self,
        fields: &[RawField],
        lens: Option<&[usize]>,
        types: &[&str],
    ) -> Result<PendingExchange> {
        let _w = polling();
        let (what, fp) = self.call_of(fields, types);
        if self.pending.is_some() {
            return Err(Error::invalid_input(format!(
                "{what}: a remap is pending; move the fields to their new buffers first (Grid::move_fields)"
            )));
        }
        let call = self.core.next_exchange(|| what.to_string(), fp)?;
        let op = || what.to_string();
        let types = self
            .check_fields(&self.layout, fields, lens)
            .and_then(|()| self.types(fields));
        let types = match types {
            Ok(t) => t,
            Err(e) => return Err(halo::refuse(&*self.core.comm, &self.core.cp, call, &op, e)),
        };
        self.cell_bytes = fields.iter().map(|f| f.elem_size).sum();
        // SAFETY: each datatype addresses the fields' regions relative to
        // the first field's buffer, all inside buffers checked against the
        // layout and valid until the exchange ends (caller's contract).
        let posted = unsafe { post_exchange(&*self.core.comm, call, fields[0].data, &types) }?;
        self.in_flight += 1;
        Ok(PendingExchange {
            posted,
            what,
            _types: types,
        })
    }

    /// Checks a field set against `layout` (at least one field).
    pub(super) fn check_fields(
        &self,
        layout: &Layout,
        fields: &[RawField],
        lens: Option<&[usize]>,
    ) -> Result<()> {
        if fields.is_empty() {
            return Err(Error::invalid_input("no fields"));
        }
        for (k, f) in fields.iter().enumerate() {
            layout.check_field(k, f, lens.map(|l| l[k]))?;
        }
        Ok(())
    }

    /// The exchange datatypes of a field set, from the cache or built.
    fn types(&mut self, fields: &[RawField]) -> Result<Rc<PeerTypes>> {
        let offs = offsets(fields);
        let key: FieldKey = fields
            .iter()
            .zip(&offs)
            .map(|(f, &o)| (o, f.elem_size, f.pad))
            .collect();
        if let Some((_, t)) = self.cache.iter().find(|(k, _)| *k == key) {
            return Ok(t.clone());
        }
        let types = self.layout.exchange_types(fields)?;
        let types = Rc::new(types);
        if self.cache.len() >= CACHED_FIELD_SETS {
            self.cache.remove(0);
        }
        self.cache.push((key, types.clone()));
        Ok(types)
    }
}
