"""The constructor and settings both clients share."""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, Mapping, Optional, TypeVar

from ._wire import Settings

_Client = TypeVar("_Client", bound="ClientBase")


def describe_method(method: Callable[..., Any], build: Callable[..., Any], returns: str) -> None:
    """Gives a method made from a call builder the builder's name and docstring, and for ``help()`` its signature
    with ``self`` in place of the settings and ``returns`` (``{}`` stands for what the call answers)."""
    functools.update_wrapper(method, build)
    signature = inspect.signature(build)
    parameters = list(signature.parameters.values())
    parameters[0] = parameters[0].replace(name="self", annotation=inspect.Parameter.empty)
    answer = str(signature.return_annotation)
    if answer.startswith("Call[") and answer.endswith("]"):
        answer = answer[len("Call["):-1]
    setattr(method, "__signature__", signature.replace(parameters=parameters,
                                                       return_annotation=returns.format(answer)))


class ClientBase:
    """Holds what every call needs: address, credentials, default space, timeout and retry policy."""

    def __init__(
        self,
        base_url: str = "http://localhost:8888",
        api_key: Optional[str] = None,
        space: Optional[str] = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        *,
        tenant: Optional[str] = None,
        max_retry_delay: float = 60.0,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        headers: Optional[Mapping[str, str]] = None,
        user_agent: Optional[str] = None,
    ) -> None:
        self._settings = Settings.create(base_url, api_key, space, timeout, max_retries, tenant, max_retry_delay,
                                         backoff_base, backoff_max, headers, user_agent)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    @property
    def prefix(self) -> str:
        """``/v1/{tenant}``: the prefix of the bank, memory, space and operation paths."""
        return self._settings.prefix

    @property
    def space(self) -> Optional[str]:
        return self._settings.space

    @property
    def timeout(self) -> float:
        return self._settings.timeout

    @property
    def max_retries(self) -> int:
        return self._settings.max_retries

    def with_options(
        self: _Client,
        *,
        space: Optional[str] = None,
        timeout: Optional[float] = None,
        max_retries: Optional[int] = None,
        max_retry_delay: Optional[float] = None,
    ) -> _Client:
        """A copy of this client with some settings changed (the arguments given), for one call or a group of calls:
        ``client.with_options(timeout=5, max_retries=0).recall(...)``. This client is left as it is."""
        changes: Dict[str, Any] = {"space": space, "timeout": timeout, "max_retries": max_retries,
                                   "max_retry_delay": max_retry_delay}
        changes = {key: value for key, value in changes.items() if value is not None}
        if changes.get("max_retries", 0) < 0:
            raise ValueError("max_retries must be 0 or more")
        clone = copy.copy(self)
        clone._settings = dataclasses.replace(self._settings, **changes)
        return clone

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, prefix={self.prefix!r}, space={self.space!r})"
