//! The host's own (local) tools: their definitions, and their results computed from values the
//! shell supplies (the core has no clock).

use serde_json::json;

use super::{RunTool, ToolKind};
use crate::core::toolset::ToolSpec;

/// The name of the host's own clock tool.
pub const CURRENT_TIME: &str = "current_time";

/// The local tools every conversation may offer.
pub fn local_tools() -> Vec<RunTool> {
    vec![RunTool {
        spec: ToolSpec {
            name: CURRENT_TIME.into(),
            description: "The current date and time where the person is, in ISO 8601 with the UTC offset, and the weekday.".into(),
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        },
        kind: ToolKind::Local,
        data_source: None,
    }]
}

/// `current_time`'s result for a clock reading: milliseconds since the Unix epoch and the
/// local offset from UTC in minutes (east positive). Example:
/// `2026-11-29T14:05:09+01:00 (Sunday)`.
pub fn current_time_result(epoch_ms: f64, utc_offset_minutes: i32) -> String {
    let local_seconds = (epoch_ms / 1000.0).floor() as i64 + i64::from(utc_offset_minutes) * 60;
    let days = local_seconds.div_euclid(86_400);
    let seconds = local_seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let weekday = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
    ][days.rem_euclid(7) as usize];
    let sign = if utc_offset_minutes < 0 { '-' } else { '+' };
    let offset = utc_offset_minutes.unsigned_abs();
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02} ({weekday})",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60,
        offset / 60,
        offset % 60
    )
}

/// Year, month, day of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_time_formats_local_time() {
        assert_eq!(
            current_time_result(0.0, 0),
            "1970-01-01T00:00:00+00:00 (Thursday)"
        );
        // 2026-11-29T13:05:09Z
        let ms = 1_795_957_509_000.0;
        assert_eq!(
            current_time_result(ms, 60),
            "2026-11-29T14:05:09+01:00 (Sunday)"
        );
        assert_eq!(
            current_time_result(ms, -330),
            "2026-11-29T07:35:09-05:30 (Sunday)"
        );
        assert_eq!(
            current_time_result(951_782_400_000.0, 0),
            "2000-02-29T00:00:00+00:00 (Tuesday)"
        );
        assert_eq!(
            current_time_result(-86_400_000.0, 0),
            "1969-12-31T00:00:00+00:00 (Wednesday)"
        );
    }

    #[test]
    fn local_tools_have_valid_names_and_schemas() {
        let (set, problems) =
            crate::core::toolset::ToolSet::new(local_tools().into_iter().map(|t| t.spec));
        assert!(problems.is_empty());
        assert_eq!(set.names().collect::<Vec<_>>(), [CURRENT_TIME]);
        assert!(set.validate(CURRENT_TIME, &json!({})).is_ok());
    }
}
