//! Reading sections and `section.key=value` overrides, with errors that name the key.

use serde::de::DeserializeOwned;

use super::ConfigError;

/// Deserializes one section; an error names the key it is about.
pub(super) fn section<T: DeserializeOwned + Default>(
    table: &toml::Table,
    name: &str,
    origin: &str,
) -> Result<T, ConfigError> {
    let Some(value) = table.get(name) else {
        return Ok(T::default());
    };
    let Some(sub) = value.as_table() else {
        return Err(ConfigError::UnknownSection {
            origin: origin.into(),
            section: name.into(),
        });
    };
    // Serialize the section alone and parse it back: the parse error's span is on the line of
    // the offending key, so the error can name it.
    let text = toml::to_string(sub).map_err(|e| ConfigError::Section {
        origin: origin.into(),
        section: name.into(),
        message: e.to_string(),
    })?;
    toml::from_str::<T>(&text).map_err(|e| {
        let message = e.message().to_string();
        let key = e
            .span()
            .and_then(|span| key_at(&text, span.start))
            .or_else(|| unknown_field_name(&message));
        match key {
            Some(key) => ConfigError::Key {
                origin: origin.into(),
                section: name.into(),
                key,
                message,
            },
            None => ConfigError::Section {
                origin: origin.into(),
                section: name.into(),
                message,
            },
        }
    })
}

/// The key of the `key = value` line holding byte `pos` of `text`.
fn key_at(text: &str, pos: usize) -> Option<String> {
    let start = text[..pos.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let key = line.split('=').next()?.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// `unknown field `x`` -> `x`.
fn unknown_field_name(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

/// Applies `section.key=value` to the raw table. The value is parsed as TOML; when that fails
/// (a bare word such as `balanced`), it is taken as a string.
pub fn apply_override(table: &mut toml::Table, o: &str) -> Result<(), ConfigError> {
    let (path, raw) = o
        .split_once('=')
        .ok_or_else(|| ConfigError::BadOverride(o.into()))?;
    let (sec, key) = path
        .trim()
        .split_once('.')
        .ok_or_else(|| ConfigError::BadOverride(o.into()))?;
    if sec.is_empty() || key.is_empty() || key.contains('.') {
        return Err(ConfigError::BadOverride(o.into()));
    }
    let raw = raw.trim();
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let entry = table
        .entry(sec.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match entry.as_table_mut() {
        Some(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        None => Err(ConfigError::UnknownSection {
            origin: format!("override `{o}`"),
            section: sec.into(),
        }),
    }
}

/// Refuses the keys that moved ([`super::MOVED_KEYS`]: the testbed's settings, now in
/// `[testbed]`) and the old way of naming the testbed (`model.path = "testbed"`,
/// `data.train_files = "testbed"`), each with an error that names what replaces it.
pub(super) fn moved_key(table: &toml::Table, origin: &str) -> Result<(), ConfigError> {
    let get = |sec: &str, key: &str| table.get(sec).and_then(|s| s.get(key));
    for &(old, new) in super::MOVED_KEYS {
        let (sec, key) = old.split_once('.').expect("section.key");
        if get(sec, key).is_some() {
            return Err(ConfigError::Key {
                origin: origin.into(),
                section: sec.into(),
                key: key.into(),
                message: format!(
                    "moved to `testbed.{new}` (the testbed's settings are one section, \
                     [testbed]); rename it"
                ),
            });
        }
    }
    for (sec, key) in [("model", "path"), ("data", "train_files")] {
        if get(sec, key).and_then(|v| v.as_str()) == Some(rlvr_tasks::testbed::NAME) {
            return Err(ConfigError::Key {
                origin: origin.into(),
                section: sec.into(),
                key: key.into(),
                message: "\"testbed\" is no longer a value here: leave model.path and \
                          data.train_files unset to train the testbed (its settings are in \
                          [testbed]), or give a local directory as ./testbed"
                    .into(),
            });
        }
    }
    Ok(())
}
