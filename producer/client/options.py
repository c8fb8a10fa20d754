"""Per-job options checked against the settings' ceilings before anything is enqueued."""

from __future__ import annotations

from tersify.contract import JobOptions, PendingSummary
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store import callbacks


def model_allowed(settings: Settings, model: str) -> bool:
    """Whether a job may ask for ``model``: one ``TERSIFY_JOB_MODELS`` lists, one a setting
    names (a provider's ``TERSIFY_<NAME>_MODEL``, ``TERSIFY_COMPACTION_MODEL``), or one with a
    price in ``TERSIFY_MODEL_PRICES`` (the configured providers' default models have one)."""
    named = {settings.compaction_model, *settings.job_models}
    named |= {settings.extra_value(k) for k in settings.model_extra or {} if k.endswith("_model")}
    return model in named or settings.model_prices.price(model) is not None


def callback_allowed(settings: Settings, url: str) -> bool:
    """Whether ``url``, normalized, lies under an allowed URL (``tersify.store.callbacks``)."""
    try:
        callbacks.checked(settings.webhook_allowed_urls, url)
    except callbacks.CallbackURLError:
        return False
    return True


def check_options(settings: Settings, options: JobOptions | None) -> None:
    """Refuse options past their ceilings with ``InvalidJobError`` naming the setting."""
    if options is None:
        return
    if options.budget_chars is not None and options.budget_chars > settings.job_max_budget_chars:
        raise InvalidJobError(
            f"budget_chars {options.budget_chars} is over TERSIFY_JOB_MAX_BUDGET_CHARS "
            f"({settings.job_max_budget_chars})"
        )
    cap = settings.job_max_summary_chars
    if options.max_summary_chars is not None and options.max_summary_chars > cap:
        raise InvalidJobError(
            f"max_summary_chars {options.max_summary_chars} is over "
            f"TERSIFY_JOB_MAX_SUMMARY_CHARS ({cap})"
        )
    read = options.model_read_max_chars
    if read is not None and read > settings.model_read_max_chars:
        raise InvalidJobError(
            f"model_read_max_chars {read} is over TERSIFY_MODEL_READ_MAX_CHARS "
            f"({settings.model_read_max_chars})"
        )
    if options.model is not None and not model_allowed(settings, options.model):
        raise InvalidJobError(f"model {options.model!r} is not allowed (TERSIFY_JOB_MODELS)")
    if options.callback_url is not None:
        if settings.webhook_secret is None:
            raise InvalidJobError("callback_url needs TERSIFY_WEBHOOK_SECRET to sign the POST")
        try:
            callbacks.checked(settings.webhook_allowed_urls, options.callback_url)
        except callbacks.CallbackURLError as exc:
            raise InvalidJobError(str(exc)) from None


def summarizes(settings: Settings, job: PendingSummary) -> bool:
    """Whether ``job`` goes to a worker: long enough (or cut from a longer output, whose whole
    text only a worker's result links to), and not asked to pass through."""
    if job.options is not None and not job.options.summarize:
        return False
    return job.cut is not None or len(job.output) > settings.summarize_threshold_chars
