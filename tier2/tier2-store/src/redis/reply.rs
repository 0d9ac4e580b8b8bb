//! Reading the replies of the Lua (`lua/`): numbers, scores, strings, the figures every reply
//! carries, places and admission records.

use redis::Value;
use vwr_tier2::model::{Admission, Figures, Place, StoreError};

pub(crate) fn proto(msg: impl Into<String>) -> StoreError {
    StoreError::Protocol(msg.into())
}

pub(crate) fn as_u64(v: &Value) -> Result<u64, StoreError> {
    match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| proto(format!("negative {i}"))),
        Value::BulkString(b) => {
            std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).ok_or_else(|| proto("not a number"))
        }
        Value::Nil => Ok(0),
        other => Err(proto(format!("expected a number, got {other:?}"))),
    }
}

/// A sorted-set score (an integer: a tier-1 position, an arrival stamp in µs, 0), as Redis
/// writes it (`%.17g`, or an integer reply from Lua).
pub(crate) fn as_score(v: &Value) -> Result<u64, StoreError> {
    if let Ok(n) = as_u64(v) {
        return Ok(n);
    }
    let text = as_string(v)?;
    match text.parse::<f64>() {
        Ok(f) if (0.0..9.007_199_254_740_992e15).contains(&f) => Ok(f as u64),
        _ => Err(proto(format!("bad score {text:?}"))),
    }
}

pub(crate) fn as_string(v: &Value) -> Result<String, StoreError> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).map_err(|_| proto("not UTF-8")),
        Value::SimpleString(s) => Ok(s.clone()),
        other => Err(proto(format!("expected a string, got {other:?}"))),
    }
}

pub(crate) fn as_array(v: Value) -> Result<Vec<Value>, StoreError> {
    match v {
        Value::Array(a) => Ok(a),
        other => Err(proto(format!("expected an array, got {other:?}"))),
    }
}

/// Parses `"jti|admittedAtMs|expiresAtMs|tokenExpMs"` (records written before the token end
/// existed have three fields).
pub(crate) fn parse_admission(rec: &str) -> Result<Admission, StoreError> {
    let mut it = rec.split('|');
    let (jti, at, exp) =
        (it.next(), it.next().and_then(|a| a.parse().ok()), it.next().and_then(|e| e.parse().ok()));
    let tok = match it.next() {
        None | Some("") => Some(0),
        Some(t) => t.parse().ok(),
    };
    match (jti, at, exp, tok, it.next()) {
        (Some(jti), Some(admitted_at_ms), Some(expires_at_ms), Some(token_expires_at_ms), None)
            if !jti.is_empty() =>
        {
            Ok(Admission { jti: jti.to_owned(), admitted_at_ms, expires_at_ms, token_expires_at_ms })
        }
        _ => Err(proto(format!("bad admission record {rec:?}"))),
    }
}

/// The figures every reply about an event carries, five elements: line size, slots taken,
/// threshold, admissions in the last 60 s, whole seconds since the first admission (nil before
/// it).
pub(crate) fn figures(f: &[Value]) -> Result<Figures, StoreError> {
    let [size, active, threshold, rate, since] = f else {
        return Err(proto(format!("bad figures {f:?}")));
    };
    Ok(Figures {
        queue_size: as_u64(size)?,
        active: as_u64(active)?,
        threshold: as_u64(threshold)?,
        admitted_last_60s: as_u64(rate)?,
        since_first_admission_secs: match since {
            Value::Nil => None,
            v => Some(as_u64(v)?),
        },
    })
}

/// Parses a `describe()` reply (after its tag); a check's reply says in its 9th element whether
/// it gave back a place a timeout had taken.
pub(crate) fn parse_place(tag: &str, a: &[Value]) -> Result<Place, StoreError> {
    let restored = a.get(8).map(as_u64).transpose()?.unwrap_or(0) == 1;
    if a.len() < 7 {
        return Err(proto(format!("short reply {a:?}")));
    }
    let fig = || figures(&a[2..7]);
    match tag {
        "queued" => Ok(Place::Queued {
            position: as_u64(&a[1])?,
            figures: fig()?,
            restored,
            score: a.get(9).map(as_score).transpose()?,
        }),
        "active" | "admitted" => Ok(Place::Active {
            admission: parse_admission(&as_string(&a[1])?)?,
            fresh: tag == "admitted",
            restored,
            figures: fig()?,
        }),
        other => Err(proto(format!("unexpected tag {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_records_old_and_new() {
        let a = parse_admission("j1|10|20").unwrap();
        assert_eq!((a.expires_at_ms, a.token_expires_at_ms), (20, 0));
        assert_eq!(parse_admission("j1|10|20|15").unwrap().token_expires_at_ms, 15);
        assert!(parse_admission("j1|10|20|x").is_err());
        assert!(parse_admission("|10|20|15").is_err());
    }
}
