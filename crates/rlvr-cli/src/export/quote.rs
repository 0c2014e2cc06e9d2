//! Text as data in the languages an exported script is written in: shell words, Python
//! literals and docstrings, Hydra override values, one-line comments.
//!
//! Every value or path an export prints passes through one of these, so that nothing a config,
//! a file name or a `--set` holds can end a string or a comment early: a script runs only what
//! `rlvr export` wrote, and every value reaches the engine as it was.

use serde_json::Value;

use super::refuse;

/// `s` with every character that could end a line or hide from a reader written as an escape:
/// `\` as `\\`, control characters (C0, DEL, C1) and the Unicode line and paragraph separators
/// as `\xHH` / `\uHHHH` (`\n`, `\r`, `\t` by name). The result is one line, and as the body of
/// a non-raw Python string it reads back as `s` exactly.
pub(super) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `s` as text inside a Python `"""` docstring: [`one_line`] with every `"` next to another
/// `"` escaped (a lone one cannot close the docstring and stays readable), so that the
/// docstring cannot close early and `__doc__` holds `s` exactly.
pub(super) fn py_doc(s: &str) -> String {
    let text: Vec<char> = one_line(s).chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in text.iter().enumerate() {
        let quote_beside =
            (i > 0 && text[i - 1] == '"') || text.get(i + 1).is_some_and(|&n| n == '"');
        if c == '"' && quote_beside {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `s` as a Python string literal (JSON's string form, which Python reads the same).
pub(super) fn py_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A JSON value as a Python literal: `True`, `False`, `None` at any depth; strings, numbers,
/// lists and dicts in the form JSON and Python share.
pub(super) fn py_literal(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(py_literal).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_literal(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// `s` as a single-quoted Hydra override value that Hydra (1.3) and OmegaConf read back as
/// `s`: a `'` as `\'`, a run of backslashes before a quote (or before the closing quote)
/// doubled, `${` as `\${` so that OmegaConf does not resolve it as an interpolation (and the
/// backslashes before it doubled too). Control characters have no escape in Hydra's grammar and
/// would split `--overrides-only`'s one override a line: they are refused, naming `key`.
pub(super) fn hydra_str(key: &str, s: &str) -> anyhow::Result<String> {
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(refuse(
            key,
            format!(
                "{:?} holds the control character {c:?}, which a Hydra override cannot carry",
                s
            ),
        ));
    }
    let mut out = String::from("'");
    let mut backslashes = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                backslashes += 1;
                continue;
            }
            '\'' => {
                push_backslashes(&mut out, backslashes, true);
                out.push_str("\\'");
            }
            '$' if chars.peek() == Some(&'{') => {
                push_backslashes(&mut out, backslashes, true);
                out.push_str("\\$");
            }
            c => {
                push_backslashes(&mut out, backslashes, false);
                out.push(c);
            }
        }
        backslashes = 0;
    }
    push_backslashes(&mut out, backslashes, true);
    out.push('\'');
    Ok(out)
}

fn push_backslashes(out: &mut String, n: usize, doubled: bool) {
    let n = if doubled { 2 * n } else { n };
    out.extend(std::iter::repeat_n('\\', n));
}

/// A JSON value as a Hydra override value: strings by [`hydra_str`], numbers and booleans
/// bare, `null`, lists `[a,b]`, dicts `{key:value}` whose keys are identifiers (anything else
/// is refused, naming `key`).
pub(super) fn hydra_value(key: &str, v: &Value) -> anyhow::Result<String> {
    Ok(match v {
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if !n.is_i64() && !n.is_u64() => yaml_float(x),
            _ => n.to_string(),
        },
        Value::String(s) => hydra_str(key, s)?,
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|v| hydra_value(key, v))
                .collect::<anyhow::Result<Vec<_>>>()?;
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => {
            let mut items = Vec::with_capacity(map.len());
            for (k, v) in map {
                let ident = k
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ident {
                    return Err(refuse(
                        key,
                        format!(
                            "the key {k:?} is not an identifier, which a Hydra dict key must be"
                        ),
                    ));
                }
                items.push(format!("{k}:{}", hydra_value(key, v)?));
            }
            format!("{{{}}}", items.join(","))
        }
    })
}

/// Escapes `s` for a double-quoted shell word, keeping the script's `${DATA}`, `${N_GPUS}` and
/// `${REWARD_PY}` live where the exporter put them: never after a backslash, which is where
/// [`hydra_str`] leaves every `${` of a value (`\${`), so a value's own `${DATA}` stays text.
pub(super) fn shell_dq(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    let mut after_backslash = false;
    while !rest.is_empty() {
        if let Some(var) = ["${DATA}", "${N_GPUS}", "${REWARD_PY}"]
            .iter()
            .find(|v| !after_backslash && rest.starts_with(**v))
        {
            out.push_str(var);
            rest = &rest[var.len()..];
            continue;
        }
        let c = rest.chars().next().expect("non-empty");
        after_backslash = c == '\\';
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `s` as one shell word: bare when it holds only `[A-Za-z0-9._/+-]`, else single-quoted.
pub(super) fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A name as a data file's stem: characters outside `[A-Za-z0-9._-]` as `_`, so that the file
/// is one plain name in a shell word, a Hydra value and a Python f-string alike.
pub(super) fn file_stem_safe(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    match stem.trim_start_matches('.') {
        "" => "data".into(),
        s => s.to_string(),
    }
}

/// A float as YAML/Hydra reads a float (`1.0e-06`, never `1e-6`, which YAML 1.1 reads as a
/// string).
pub(super) fn yaml_float(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.1}");
    }
    let s = format!("{x:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        format!("{x}")
    } else {
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_every_line_break() {
        assert_eq!(one_line("a\nb\r\tc"), "a\\nb\\r\\tc");
        assert_eq!(one_line("x\\ny"), "x\\\\ny");
        assert_eq!(one_line("\u{1b}[2J\u{7f}\u{85}"), "\\x1b[2J\\x7f\\x85");
        assert_eq!(one_line("l\u{2028}p\u{2029}"), "l\\u2028p\\u2029");
        assert_eq!(one_line("π = 3.14 `$(x)`"), "π = 3.14 `$(x)`");
        assert!(!one_line("a\u{b}\u{c}\u{1c}\u{1d}\u{1e}")
            .chars()
            .any(char::is_control));
    }

    #[test]
    fn docstring_text_cannot_close_the_docstring() {
        assert_eq!(py_doc("a\"\"\"b"), "a\\\"\\\"\\\"b");
        assert_eq!(py_doc("C:\\N"), "C:\\\\N");
        assert_eq!(py_doc("\"auto\" \"\""), "\"auto\" \\\"\\\"");
    }

    #[test]
    fn python_literals_at_any_depth() {
        let v: Value = serde_json::json!({"a": [true, null, {"b": false}], "q\"": "x\ny"});
        assert_eq!(
            py_literal(&v),
            r#"{"a": [True, None, {"b": False}], "q\"": "x\ny"}"#
        );
    }

    #[test]
    fn hydra_strings_escape_quotes_backslashes_and_interpolations() {
        let h = |s: &str| hydra_str("k", s).unwrap();
        assert_eq!(h("it's"), r"'it\'s'");
        assert_eq!(h(r"a\b"), r"'a\b'");
        assert_eq!(h(r"end\"), r"'end\\'");
        assert_eq!(h(r"q\'"), r"'q\\\''");
        assert_eq!(h("${oc.env:HOME}"), r"'\${oc.env:HOME}'");
        assert_eq!(h(r"\${x}"), r"'\\\${x}'");
        assert_eq!(h("$x {y}"), "'$x {y}'");
        let err = hydra_str("trainer.run_name", "a\nb")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("trainer.run_name") && err.contains("control"),
            "{err}"
        );
    }

    #[test]
    fn hydra_dict_keys_must_be_identifiers() {
        let ok = serde_json::json!({"enable_thinking": false, "n": 2, "x": 0.5});
        assert_eq!(
            hydra_value("data.chat_template_kwargs", &ok).unwrap(),
            "{enable_thinking:false,n:2,x:0.5}"
        );
        let bad = serde_json::json!({"a,b:c}": 1});
        let err = hydra_value("data.chat_template_kwargs", &bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("data.chat_template_kwargs"), "{err}");
    }

    #[test]
    fn shell_quoting_keeps_the_script_variables_only() {
        assert_eq!(shell_dq("a=${DATA}/x"), "a=${DATA}/x");
        assert_eq!(
            shell_dq("n='$(rm -rf ~)`x`\""),
            "n='\\$(rm -rf ~)\\`x\\`\\\""
        );
        // a value's own `${DATA}` comes escaped from hydra_str and stays text
        let value = hydra_str("model.path", "${DATA}").unwrap();
        assert_eq!(shell_dq(&value), "'\\\\\\${DATA}'");
        assert_eq!(shell_word("gsm8k_train"), "gsm8k_train");
        assert_eq!(shell_word("a b'c"), "'a b'\\''c'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn data_file_stems_are_plain_names() {
        assert_eq!(file_stem_safe("gsm8k_train"), "gsm8k_train");
        assert_eq!(file_stem_safe("a b$(x)'"), "a_b__x__");
        assert_eq!(file_stem_safe(".."), "data");
        assert_eq!(file_stem_safe("..x"), "x");
    }
}
