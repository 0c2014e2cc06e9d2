//! Refusals: a response that says the answer cannot be found has no answer, whatever
//! numbers it mentions.
//!
//! "There is not enough information to determine $f(0)$." names `0`, but it does not answer
//! 0: when the statement or final line an answer would be drawn from holds one of the
//! [`PHRASES`] (ASCII case-insensitive), extraction takes no number from it
//! ([`super::extract`]): the statement is kept as text (so it can only match a gold answer
//! that is the same text) and the final-line fallback finds no answer.

/// Phrases that decline to answer (lowercase).
pub const PHRASES: &[&str] = &[
    "not enough information",
    "insufficient information",
    "not enough info",
    "not sufficient information",
    "cannot be determined",
    "can't be determined",
    "can not be determined",
    "cannot determine",
    "can't determine",
    "cannot be found",
    "cannot be uniquely determined",
    "not possible to determine",
    "impossible to determine",
    "unable to determine",
    "no way to determine",
    "not determinable",
    "cannot be computed",
    "cannot be calculated",
    "i cannot answer",
    "i can't answer",
    "i'm unable to",
    "i am unable to",
    "i'm not able to",
    "not able to solve",
    "cannot solve",
    "can't solve",
    "none of the answer options",
    "none of the answer choices",
    "none of the options",
    "none of the choices",
    "none of the given options",
    "none of the given choices",
    "none of the given answers",
    "no correct option",
    "no correct choice",
    "no correct answer",
    // the same in the languages models answer in
    "无法确定",
    "不能确定",
    "无法求出",
    "不能求出",
    "无法判断",
    "无法计算",
    "条件不足",
    "信息不足",
    "no se puede determinar",
    "no es posible determinar",
    "información insuficiente",
    "nicht bestimmt werden",
    "nicht genügend informationen",
    "lässt sich nicht bestimmen",
    "ne peut pas être déterminé",
    "impossible de déterminer",
    "pas assez d'informations",
];

/// Whether `text` declines to answer (see the module docs).
pub fn is_refusal(text: &str) -> bool {
    let lower = text.to_ascii_lowercase().replace('’', "'");
    PHRASES.iter().any(|p| lower.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_and_answers() {
        assert!(is_refusal(
            "There is not enough information to determine $f(0)$."
        ));
        assert!(is_refusal(
            "So the value CANNOT be determined from 3 points."
        ));
        assert!(!is_refusal("So the value is $f(0) = 3$."));
        assert!(is_refusal(
            "Solution: Unfortunately, there is no correct choice from the options A, B, C, or D."
        ));
        assert!(is_refusal("None of the given choices is the side length."));
        assert!(!is_refusal("The correct choice is (B)."));
        assert!(is_refusal("条件不足，无法确定答案。"));
        assert!(is_refusal(
            "Por lo tanto, no se puede determinar el valor de x."
        ));
        assert!(is_refusal("Der Wert kann nicht bestimmt werden."));
        assert!(is_refusal("La valeur ne peut pas être déterminée."));
        assert!(!is_refusal("所以答案是 5。"));
        assert!(!is_refusal("Die Antwort ist 5."));
    }
}
