//! What a model's server says of itself, and how it says a request is too long for it.
//!
//! llama.cpp's server answers `GET /props` with the context it runs
//! (`default_generation_settings.n_ctx`, or `n_ctx` at the top in some versions) and its chat
//! template (`chat_template`); vLLM's `GET /v1/models` gives each model's `max_model_len`.
//! Hosted APIs say neither: then only a configured `context_tokens` is known.

use serde_json::Value;

/// What the server said (each part `None` when it did not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServerInfo {
    /// The context size the server runs the model with, in tokens.
    pub context_tokens: Option<u32>,
    /// The server's chat template (llama.cpp `/props` `chat_template`).
    pub chat_template: Option<String>,
}

impl ServerInfo {
    /// Read `/props` and `/v1/models` answers (either may be missing) for the model `model_id`.
    pub fn read(props: Option<&Value>, models: Option<&Value>, model_id: &str) -> ServerInfo {
        let as_u32 = |v: &Value| {
            v.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
        };
        let from_props = props.and_then(|p| {
            p.pointer("/default_generation_settings/n_ctx")
                .and_then(as_u32)
                .or_else(|| p.get("n_ctx").and_then(as_u32))
        });
        let from_models = models.and_then(|m| {
            let data = m.get("data")?.as_array()?;
            let entry = data
                .iter()
                .find(|d| d.get("id").and_then(Value::as_str) == Some(model_id))
                .or_else(|| (data.len() == 1).then(|| &data[0]))?;
            entry.get("max_model_len").and_then(as_u32)
        });
        let chat_template = props
            .and_then(|p| p.get("chat_template"))
            .and_then(Value::as_str)
            .map(str::to_string);
        ServerInfo {
            context_tokens: from_props.or(from_models),
            chat_template,
        }
    }

    /// A note on the chat template when it is worth one: llama.cpp falls back to ChatML for a
    /// model file without a template of its own, which a model trained on another template
    /// answers badly.
    pub(crate) fn template_note(&self) -> Option<String> {
        let t = self.chat_template.as_deref()?;
        if t.trim().is_empty() {
            return Some(
                "the server reports no chat template: start llama.cpp with --jinja and the model's own template (--chat-template-file)".into(),
            );
        }
        t.contains("<|im_start|>").then(|| {
            "the server uses a ChatML template (<|im_start|>): llama.cpp falls back to ChatML when the model file has none; if the model was trained on another template, start the server with --chat-template NAME or --chat-template-file".to_string()
        })
    }
}

/// Whether an error answer refuses a request for being longer than the model's context:
/// llama.cpp ("the request exceeds the available context size"), vLLM and OpenAI ("maximum
/// context length is ... tokens", `context_length_exceeded`), TGI ("must have less than ...
/// input tokens").
pub(crate) fn is_context_refusal(status: u16, body: &str) -> bool {
    if !matches!(status, 400 | 413 | 422) {
        return false;
    }
    let b = body.to_lowercase();
    b.contains("exceeds the available context size")
        || b.contains("exceed_context_size")
        || b.contains("context_length_exceeded")
        || b.contains("maximum context length")
        || b.contains("context window")
        || (b.contains("context") && (b.contains("exceed") || b.contains("too long")))
        || b.contains("input is too long")
        || b.contains("prompt is too long")
        || (b.contains("input tokens") && b.contains("must"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_llama_cpp_and_vllm() {
        // llama.cpp's /props (shape of its server README's example).
        let props = json!({"default_generation_settings": {"n_ctx": 8192, "params": {}},
            "total_slots": 1, "chat_template": "{% for m in messages %}<|im_start|>..."});
        let i = ServerInfo::read(Some(&props), None, "x");
        assert_eq!(i.context_tokens, Some(8192));
        assert!(i.template_note().unwrap().contains("ChatML"));
        // vLLM's /v1/models.
        let models = json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 2048},
            {"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "max_model_len": 32768}]});
        let i = ServerInfo::read(None, Some(&models), "Qwen/Qwen2.5-7B-Instruct");
        assert_eq!(i.context_tokens, Some(32768));
        assert_eq!(i.template_note(), None);
        // OpenAI's list says nothing of the context.
        let openai = json!({"data": [{"id": "gpt-4o-mini", "object": "model"}]});
        assert_eq!(
            ServerInfo::read(None, Some(&openai), "gpt-4o-mini"),
            ServerInfo::default()
        );
    }

    #[test]
    fn context_refusals_are_told_from_other_errors() {
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":10240,"n_ctx":8192}}"#;
        assert!(is_context_refusal(400, llama));
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens","type":"BadRequestError","code":400}"#;
        assert!(is_context_refusal(400, vllm));
        assert!(!is_context_refusal(400, r#"{"error":"model not found"}"#));
        assert!(!is_context_refusal(500, llama));
    }
}
