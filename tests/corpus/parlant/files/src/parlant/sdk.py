# Copyright 2026 Emcie Co Ltd.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from __future__ import annotations

import asyncio
import os
import uuid
from collections import defaultdict, deque
from contextlib import AsyncExitStack
import contextvars
from dataclasses import dataclass, field
from datetime import datetime, timezone
import enum
from functools import partial
import xxhash
import importlib.util
from itertools import chain
from pathlib import Path
import sys
import warnings
import rich
from rich.console import Console, Group
from rich.panel import Panel
import rich.box
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TimeElapsedColumn,
    TaskID,
    TextColumn,
)
from rich.live import Live
from rich.text import Text
from types import ModuleType, TracebackType
from typing import (
    Any,
    Awaitable,
    Callable,
    Coroutine,
    Generic,
    Iterable,
    Iterator,
    Literal,
    Mapping,
    NoReturn,
    Optional,
    Sequence,
    Set,
    TypeVar,
    TypeAlias,
    TypedDict,
    cast,
)
from typing_extensions import deprecated, overload
from fastapi import FastAPI
import httpx
from lagom import Container


from parlant.adapters.db.json_file import JSONFileDocumentCollection, JSONFileDocumentDatabase
from parlant.adapters.db.transient import TransientDocumentDatabase
from parlant.adapters.vector_db.transient import TransientVectorDatabase
from parlant.api.authorization import (
    AuthorizationException,
    Operation,
    AuthorizationPolicy,
    BasicRateLimiter,
    DevelopmentAuthorizationPolicy,
    ProductionAuthorizationPolicy,
    RateLimitExceededException,
    RateLimiter,
)


from parlant.core import async_utils
from parlant.core.application import Application as _Application
from parlant.core.agents import (
    AgentDocumentStore,
    AgentId,
    AgentStore,
    CompositionMode as _CompositionMode,
    MessageOutputMode as _MessageOutputMode,
)
from parlant.core.async_utils import Timeout, default_done_callback
from parlant.core.capabilities import CapabilityId, CapabilityStore, CapabilityVectorStore
from parlant.core.common import (
    Criticality,
    DefaultBaseModel,
    IdGenerator,
    ItemNotFoundError,
    JSONSerializable,
    Version,
    classproperty,
)
from parlant.core.context_variables import (
    ContextVariable,
    ContextVariableDocumentStore,
    ContextVariableId,
    ContextVariableStore,
)
from parlant.core.emission.event_publisher import EventPublisherFactory
from parlant.core.health import HealthReporter
from parlant.core.engines.alpha.guideline_matching.generic.common import (
    format_journey_node_guideline_id,
)
from parlant.core.meter import Meter
from parlant.core.tracer import Tracer
from parlant.core.customers import (
    Customer as _Customer,
    CustomerDocumentStore,
    CustomerId,
    CustomerStore,
)
from parlant.core.emissions import EmittedEvent, EventEmitterFactory
from parlant.core.engines.types import (
    UtteranceRationale as _UtteranceRationale,
    UtteranceRequest as _UtteranceRequest,
)
from parlant.core.engines.alpha.prompt_builder import PromptBuilder, PromptSection
from parlant.core.engines.alpha.hooks import EngineHook, EngineHookResult, EngineHooks
from parlant.core.engines.alpha.engine_context import (
    EngineContext,
    Interaction,
    InteractionMessage,
)
from parlant.core.engines.alpha.entity_context import EntityContext
from parlant.core.engines.alpha.guideline_matching.guideline_match import (
    GuidelineMatch as _GuidelineMatch,
)
from parlant.core.engines.alpha.guideline_matching.guideline_matching_context import (
    GuidelineMatchingContext as _GuidelineMatchingContext,
)
from parlant.core.engines.alpha.guideline_matching.generic_guideline_matching_strategy_resolver import (
    GenericGuidelineMatchingStrategyResolver,
)
from parlant.core.engines.alpha.guideline_matching.custom_guideline_matching_strategy import (
    CustomGuidelineMatchingStrategy,
)
from parlant.core.glossary import GlossaryStore, GlossaryVectorStore, TermId
from parlant.core.guideline_tool_associations import (
    GuidelineToolAssociationDocumentStore,
    GuidelineToolAssociationStore,
)
from parlant.core.nlp.embedding import (
    Embedder,
    EmbedderFactory,
    EmbeddingCache,
    EmbeddingResult,
)
from parlant.core.nlp.generation import (
    FallbackSchematicGenerator,
    SchematicGenerationResult,
    SchematicGenerator,
)
from parlant.core.nlp.tokenization import EstimatingTokenizer
from parlant.core.persistence.common import ObjectId
from parlant.core.persistence.document_database import DocumentDatabase, identity_loader_for
from parlant.core.relationships import (
    RelationshipKind,
    RelationshipDocumentStore,
    RelationshipEntity,
    RelationshipEntityId,
    RelationshipEntityKind,
    RelationshipId,
    RelationshipStore,
)
from parlant.core.services.indexing.behavioral_change_evaluation import BehavioralChangeEvaluator
from parlant.core.services.indexing.indexer import Indexer
from parlant.core.services.tools.service_registry import ServiceDocumentRegistry, ServiceRegistry
from parlant.core.sessions import (
    Event,
    EventKind,
    EventSource,
    MessageEventData,
    SessionId,
    SessionDocumentStore,
    SessionStore,
    SessionUpdateParams as _SessionUpdateParams,
    StatusEventData,
    ToolCall as _SessionToolCall,
    ToolEventData,
    ToolResult as _SessionToolResult,
)
from parlant.core.canned_responses import (
    CannedResponseVectorStore,
    CannedResponseId,
    CannedResponseStore,
)
from parlant.core.evaluations import (
    EvaluationDocumentStore,
    EvaluationStatus,
    EvaluationStore,
    GuidelinePayload,
    InvoiceGuidelineData,
    InvoiceJourneyData,
    JourneyPayload,
    PayloadOperation,
    PayloadDescriptor,
    PayloadKind,
)
from parlant.core.guidelines import (
    Guideline as _Guideline,
    GuidelineContent,
    GuidelineDocumentStore,
    GuidelineId,
    GuidelineStore,
)
from parlant.core.journeys import (
    JourneyEdgeId,
    JourneyId,
    JourneyNodeId,
    JourneyStore,
    JourneyVectorStore,
)

from parlant.core.loggers import LogLevel, Logger
from parlant.core.nlp.service import (
    EmbedderHints,
    ModelGeneration,
    ModelSize,
    ModelType,
    NLPService,
    SchematicGeneratorHints,
)

from parlant.core.nlp.moderation import (
    CustomerModerationContext,
    ModerationCheck,
    ModerationService,
    ModerationTag,
    NoModeration,
)
from parlant.core.engines.alpha.canned_response_generator import (
    CannedResponseGenerator,
    NoMatchResponseProvider,
    BasicNoMatchResponseProvider,
    PreambleConfiguration,
)
from parlant.core.engines.alpha.optimization_policy import (
    OptimizationPolicy,
    BasicOptimizationPolicy,
)
from parlant.core.engines.alpha.perceived_performance_policy import (
    PerceivedPerformancePolicy,
    PerceivedPerformancePolicyProvider,
    NullPerceivedPerformancePolicy,
    BasicPerceivedPerformancePolicy,
    VoiceOptimizedPerceivedPerformancePolicy,
)
from parlant.core.engines.alpha.planners import (
    BasicPlanner,
    NullPlan,
    NullPlanner,
    Plan,
    Planner,
    PlannerProvider,
)
from parlant.bin.server import PARLANT_HOME_DIR, start_parlant, StartupParameters
from parlant.core.services.tools.plugins import PluginServer, ToolEntry, tool
from parlant.core.tags import Tag as _Tag, TagDocumentStore, TagId, TagStore
from parlant.core.tools import (
    ControlOptions,
    Lifespan,
    SessionMode,
    SessionStatus,
    Tool,
    ToolContext,
    TransientGuideline,
    ToolId,
    ToolParameterDescriptor,
    ToolParameterOptions,
    ToolParameterType,
    ToolResult,
)
from parlant.core.version import VERSION

OutputMode = _MessageOutputMode

INTEGRATED_TOOL_SERVICE_NAME = "built-in"

ToolRef: TypeAlias = ToolEntry | ToolId
"""A reference to a tool: either a ``ToolEntry`` (hosted on the integrated
plugin server) or a ``ToolId`` (hosted on an external tool service)."""

T = TypeVar("T")


def _tool_ref_to_id(ref: ToolRef) -> ToolId:
    """Convert a ToolRef to a ToolId."""
    if isinstance(ref, ToolId):
        return ref
    return ToolId(service_name=INTEGRATED_TOOL_SERVICE_NAME, tool_name=ref.tool.name)


async def _enable_tool_refs(plugin_server: PluginServer, refs: Iterable[ToolRef]) -> None:
    """Enable only ToolEntry refs on the plugin server; skip ToolId refs."""
    for ref in refs:
        if isinstance(ref, ToolEntry):
            await plugin_server.enable_tool(ref)


JourneyStateId: TypeAlias = JourneyNodeId
JourneyTransitionId: TypeAlias = JourneyEdgeId


class SDKError(Exception):
    """Main class for SDK-related errors."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class NLPServiceConfigurationError(SDKError):
    """Raised when there is a configuration error with an NLP service."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class NLPServices:
    """A collection of static methods to create built-in NLPService instances for the SDK."""

    @staticmethod
    def parlant_cloud(container: Container) -> NLPService:
        """Creates a Parlant Cloud NLPService instance using the provided container."""
        from parlant.adapters.nlp.parlant_cloud_service import (
            ParlantCloudService,
            ParlantCloudIndexer,
        )

        if error := ParlantCloudService.verify_environment():
            raise NLPServiceConfigurationError(error)

        container[Indexer] = ParlantCloudIndexer

        return ParlantCloudService(
            container[Logger],
            container[Tracer],
            container[Meter],
            container[HealthReporter],
        )

    @staticmethod
    def emcie(container: Container) -> NLPService:
        """Creates an Emcie NLPService instance using the provided container."""
        from parlant.adapters.nlp.emcie_service import EmcieService, EmcieIndexer

        if error := EmcieService.verify_environment():
            raise NLPServiceConfigurationError(error)

        container[Indexer] = EmcieIndexer

        return EmcieService(
            container[Logger],
            container[Tracer],
            container[Meter],
            container[HealthReporter],
        )

    @staticmethod
    def azure(container: Container) -> NLPService:
        """Creates an Azure NLPService instance using the provided container."""
        from parlant.adapters.nlp.azure_service import AzureService

        if error := AzureService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return AzureService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def openai(container: Container) -> NLPService:
        """Creates an OpenAI NLPService instance using the provided container."""
        from parlant.adapters.nlp.openai_service import OpenAIService

        if error := OpenAIService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return OpenAIService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def anthropic(container: Container) -> NLPService:
        """Creates an Anthropic NLPService instance using the provided container."""
        from parlant.adapters.nlp.anthropic_service import AnthropicService

        if error := AnthropicService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return AnthropicService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def cerebras(container: Container) -> NLPService:
        """Creates a Cerebras NLPService instance using the provided container."""
        from parlant.adapters.nlp.cerebras_service import CerebrasService

        if error := CerebrasService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return CerebrasService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def together(container: Container) -> NLPService:
        """Creates a Together NLPService instance using the provided container."""
        from parlant.adapters.nlp.together_service import TogetherService

        if error := TogetherService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return TogetherService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def gemini(container: Container) -> NLPService:
        """Creates a Gemini NLPService instance using the provided container."""
        from parlant.adapters.nlp.gemini_service import GeminiService

        if error := GeminiService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return GeminiService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def litellm(container: Container) -> NLPService:
        """Creates a Litellm NLPService instance using the provided container."""
        from parlant.adapters.nlp.litellm_service import LiteLLMService

        if error := LiteLLMService.verify_environment():
            raise NLPServiceConfigurationError(error)

        service = LiteLLMService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

        # LiteLLMEmbedder takes a model_name: str parameter that lagom cannot
        # auto-resolve. We pre-register the embedder instance in the container
        # so that EmbedderFactory.create_embedder() can resolve it.
        embedder = service.create_embedder()
        container[type(embedder)] = embedder

        return service

    @staticmethod
    def modelscope(container: Container) -> NLPService:
        """Creates a ModelScope NLPService instance using the provided container."""
        from parlant.adapters.nlp.modelscope_service import ModelScopeService

        if error := ModelScopeService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return ModelScopeService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def vertex(container: Container) -> NLPService:
        """Creates a Vertex NLPService instance using the provided container."""
        from parlant.adapters.nlp.vertex_service import VertexAIService

        if error := VertexAIService.verify_environment():
            raise NLPServiceConfigurationError(error)

        if err := VertexAIService.validate_adc():
            raise NLPServiceConfigurationError(err)

        return VertexAIService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def mistral(container: Container) -> NLPService:
        """Creates a Ollama NLPService instance using the provided container."""
        from parlant.adapters.nlp.mistral_service import MistralService

        if error := MistralService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return MistralService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def ollama(container: Container) -> NLPService:
        """Creates a Ollama NLPService instance using the provided container."""
        from parlant.adapters.nlp.ollama_service import OllamaService

        if error := OllamaService.verify_environment():
            raise NLPServiceConfigurationError(error)

        if err := OllamaService.verify_models():
            raise NLPServiceConfigurationError(err)

        return OllamaService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def qwen(container: Container) -> NLPService:
        """Creates a Qwen NLPService instance using the provided container."""
        from parlant.adapters.nlp.qwen_service import QwenService

        if error := QwenService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return QwenService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def deepseek(container: Container) -> NLPService:
        """Creates a DeepSeek NLPService instance using the provided container."""
        from parlant.adapters.nlp.deepseek_service import DeepSeekService

        if error := DeepSeekService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return DeepSeekService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def novita(container: Container) -> NLPService:
        """Creates a Novita AI NLPService instance using the provided container."""
        from parlant.adapters.nlp.novita_service import NovitaService

        if error := NovitaService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return NovitaService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    @staticmethod
    def snowflake(container: Container) -> NLPService:
        """Creates a SnowflakeCortexService instance using the provided container."""
        from parlant.adapters.nlp.snowflake_cortex_service import SnowflakeCortexService

        if error := SnowflakeCortexService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return SnowflakeCortexService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )

    # @staticmethod
    # def fireworks(container: Container) -> NLPService:
    #     """Creates a Fireworks NLPService instance using the provided container."""
    #     from parlant.adapters.nlp.fireworks_service import FireworksService
    #
    #     if error := FireworksService.verify_environment():
    #         raise SDKError(error)
    #
    #     return FireworksService(container[Logger], container[Meter])
    # NOTE: Fireworks method is temporarily disabled due to fireworks-ai dependency
    # pinning protobuf=5.29.3 which has security vulnerability CVE-2025-4565

    @staticmethod
    def openrouter(
        container: Container | None = None,
    ) -> NLPService | Callable[[Container], NLPService]:
        """
        Returns a callable that creates an OpenRouter NLPService instance using the provided container.
        If container is None, the callable expects the container to be provided later (by the Server).
        All configuration is done via environment variables.
        """
        from parlant.adapters.nlp.openrouter_service import OpenRouterService

        def factory(c: Container) -> NLPService:
            if error := OpenRouterService.verify_environment():
                raise NLPServiceConfigurationError(error)
            return OpenRouterService(
                c[Logger],
                c[Tracer],
                c[Meter],
                c[HealthReporter],
            )

        if container is not None:
            return factory(container)

        return factory

    @staticmethod
    def zhipu(container: Container) -> NLPService:
        """Creates a Zhipu AI NLPService instance using the provided container."""
        from parlant.adapters.nlp.zhipu_service import ZhipuService

        if error := ZhipuService.verify_environment():
            raise NLPServiceConfigurationError(error)

        return ZhipuService(
            container[Logger], container[Tracer], container[Meter], container[HealthReporter]
        )


class _CachedGuidelineEvaluation(TypedDict, total=False):
    id: ObjectId
    creation_utc: str
    version: Version.String
    properties: dict[str, JSONSerializable]


class _CachedJourneyEvaluation(TypedDict, total=False):
    id: ObjectId
    creation_utc: str
    version: Version.String
    node_properties: dict[JourneyStateId, dict[str, JSONSerializable]]
    edge_properties: dict[JourneyTransitionId, dict[str, JSONSerializable]]


class _CachedEvaluator:
    @dataclass(frozen=True)
    class JourneyEvaluation:
        node_properties: dict[JourneyStateId, dict[str, JSONSerializable]]
        edge_properties: dict[JourneyTransitionId, dict[str, JSONSerializable]]

    @dataclass(frozen=True)
    class GuidelineEvaluation:
        properties: dict[str, JSONSerializable]

    def __init__(
        self,
        db: JSONFileDocumentDatabase,
        container: Container,
    ) -> None:
        self._db: JSONFileDocumentDatabase = db
        self._guideline_collection: JSONFileDocumentCollection[_CachedGuidelineEvaluation]
        self._journey_collection: JSONFileDocumentCollection[_CachedJourneyEvaluation]

        self._container = container
        self._logger = container[Logger]
        self._exit_stack = AsyncExitStack()
        self._progress: dict[str, float] = {}

    def _set_progress(self, key: str, pct: float) -> None:
        self._progress[key] = max(0.0, min(pct, 100.0))

    def _progress_for(self, key: str) -> float:
        return self._progress.get(key, 0.0)

    async def __aenter__(self) -> _CachedEvaluator:
        await self._exit_stack.enter_async_context(self._db)

        self._guideline_collection = await self._db.get_or_create_collection(
            name=f"guideline_evaluations_{VERSION}",
            schema=_CachedGuidelineEvaluation,
            document_loader=identity_loader_for(_CachedGuidelineEvaluation),
        )

        self._journey_collection = await self._db.get_or_create_collection(
            name=f"journey_evaluations_{VERSION}",
            schema=_CachedJourneyEvaluation,
            document_loader=identity_loader_for(_CachedJourneyEvaluation),
        )

        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        await self._exit_stack.aclose()
        return False

    def _hash_guideline_evaluation_request(
        self,
        g: GuidelineContent,
        tool_ids: Sequence[ToolId],
        journey_state_propositions: bool,
        properties_proposition: bool,
    ) -> str:
        """Generate a hash for the guideline evaluation request."""
        tool_ids_str = ",".join(str(tool_id) for tool_id in tool_ids) if tool_ids else ""

        return xxhash.xxh3_128_hexdigest(
            f"{g.condition or ''}:{g.action or ''}:{tool_ids_str}:{journey_state_propositions}:{properties_proposition}".encode()
        )

    def _hash_journey_evaluation_request(
        self,
        journey: Journey,
    ) -> str:
        """Generate a hash for the journey evaluation request."""
        node_ids_str = ",".join(str(node.id) for node in journey.states) if journey.states else ""
        edge_ids_str = (
            ",".join(str(edge.id) for edge in journey.transitions) if journey.transitions else ""
        )

        return xxhash.xxh3_128_hexdigest(f"{journey.id}:{node_ids_str}:{edge_ids_str}".encode())

    async def evaluate_guideline(
        self,
        entity_id: GuidelineId,
        g: GuidelineContent,
        tool_ids: Sequence[ToolId] = [],
    ) -> _CachedEvaluator.GuidelineEvaluation:
        return await self._evaluate_guideline(
            entity_id=entity_id,
            g=g,
            tool_ids=tool_ids,
        )

    async def _evaluate_guideline(
        self,
        entity_id: GuidelineId | JourneyStateId,
        g: GuidelineContent,
        tool_ids: Sequence[ToolId] = [],
        action_proposition: bool = True,
        journey_state_proposition: bool = False,
        properties_proposition: bool = True,
    ) -> _CachedEvaluator.GuidelineEvaluation:
        # First check if we have a cached evaluation for this guideline
        _hash = self._hash_guideline_evaluation_request(
            g=g,
            tool_ids=tool_ids,
            journey_state_propositions=journey_state_proposition,
            properties_proposition=properties_proposition,
        )

        if cached_evaluation := await self._guideline_collection.find_one({"id": {"$eq": _hash}}):
            self._logger.trace(
                f"Using cached evaluation for guideline: Condition: {g.condition or 'None'}; Action: {g.action or 'None'}"
            )

            return self.GuidelineEvaluation(
                properties=cached_evaluation["properties"],
            )

        self._logger.trace(
            f"Evaluating guideline: Condition: {g.condition or 'None'}, Action: {g.action or 'None'}"
        )

        evaluation_id = await self._container[BehavioralChangeEvaluator].create_evaluation_task(
            payload_descriptors=[
                PayloadDescriptor(
                    PayloadKind.GUIDELINE,
                    GuidelinePayload(
                        content=GuidelineContent(
                            condition=g.condition,
                            action=g.action,
                        ),
                        tool_ids=tool_ids,
                        operation=PayloadOperation.ADD,
                        action_proposition=action_proposition,
                        properties_proposition=properties_proposition,
                        journey_node_proposition=journey_state_proposition,
                    ),
                )
            ],
        )

        while True:
            evaluation = await self._container[EvaluationStore].read_evaluation(
                evaluation_id=evaluation_id,
            )

            self._set_progress(entity_id, evaluation.progress)

            if evaluation.status in [EvaluationStatus.PENDING, EvaluationStatus.RUNNING]:
                await asyncio.sleep(0.5)
                continue
            elif evaluation.status == EvaluationStatus.FAILED:
                raise SDKError(f"Evaluation failed: {evaluation.error}")
            elif evaluation.status == EvaluationStatus.COMPLETED:
                if not evaluation.invoices:
                    raise SDKError("Evaluation completed with no invoices.")
                if not evaluation.invoices[0].approved:
                    raise SDKError("Evaluation completed with unapproved invoice.")

                invoice = evaluation.invoices[0]

                if not invoice.data:
                    raise SDKError(
                        "Evaluation completed with no properties_proposition in the invoice."
                    )

            assert invoice.data

            # Cache the evaluation result
            await self._guideline_collection.insert_one(
                {
                    "id": ObjectId(_hash),
                    "creation_utc": datetime.now(timezone.utc).isoformat(),
                    "version": Version.String(VERSION),
                    "properties": cast(InvoiceGuidelineData, invoice.data).properties_proposition
                    or {},
                }
            )

            # Return the evaluation result
            return self.GuidelineEvaluation(
                properties=cast(InvoiceGuidelineData, invoice.data).properties_proposition or {},
            )

    async def evaluate_journey(
        self,
        journey: Journey,
    ) -> _CachedEvaluator.JourneyEvaluation:
        # First check if we have a cached evaluation for this journey
        _hash = self._hash_journey_evaluation_request(
            journey=journey,
        )

        if cached_evaluation := await self._journey_collection.find_one({"id": {"$eq": _hash}}):
            self._logger.trace(
                f"Using cached evaluation for journey: Title: {journey.title or 'None'};"
            )

            return self.JourneyEvaluation(
                node_properties=cached_evaluation["node_properties"],
                edge_properties=cached_evaluation["edge_properties"],
            )

        self._logger.trace(f"Evaluating journey: Title: {journey.title or 'None'}")

        evaluation_id = await self._container[BehavioralChangeEvaluator].create_evaluation_task(
            payload_descriptors=[
                PayloadDescriptor(
                    PayloadKind.JOURNEY,
                    JourneyPayload(
                        journey_id=journey.id,
                        operation=PayloadOperation.ADD,
                    ),
                )
            ],
        )

        while True:
            evaluation = await self._container[EvaluationStore].read_evaluation(
                evaluation_id=evaluation_id,
            )

            self._set_progress(journey.id, evaluation.progress)

            if evaluation.status in [EvaluationStatus.PENDING, EvaluationStatus.RUNNING]:
                await asyncio.sleep(0.5)
                continue
            elif evaluation.status == EvaluationStatus.FAILED:
                raise SDKError(f"Journey Evaluation failed: {evaluation.error}")
            elif evaluation.status == EvaluationStatus.COMPLETED:
                if not evaluation.invoices:
                    raise SDKError("Journey Evaluation completed with no invoices.")
                if not evaluation.invoices[0].approved:
                    raise SDKError("Journey Evaluation completed with unapproved invoice.")

                invoice = evaluation.invoices[0]

                if not invoice.data:
                    raise SDKError("Journey Evaluation completed with no data in the invoice.")

            assert invoice.data

            # Cache the evaluation result
            await self._journey_collection.insert_one(
                {
                    "id": ObjectId(_hash),
                    "creation_utc": datetime.now(timezone.utc).isoformat(),
                    "version": Version.String(VERSION),
                    "node_properties": cast(
                        InvoiceJourneyData, invoice.data
                    ).node_properties_proposition,
                    "edge_properties": cast(
                        InvoiceJourneyData, invoice.data
                    ).edge_properties_proposition
                    or {},
                }
            )

            # Return the evaluation result
            return self.JourneyEvaluation(
                node_properties=cast(InvoiceJourneyData, invoice.data).node_properties_proposition
                or {},
                edge_properties=cast(InvoiceJourneyData, invoice.data).edge_properties_proposition
                or {},
            )


@dataclass(frozen=True)
class Tag:
    """A tag used to categorize and link entities."""

    @staticmethod
    def preamble() -> Tag:
        core_tag = _Tag.preamble()
        return Tag(id=core_tag.id, name=core_tag.name)

    id: TagId
    name: str
    _server: Optional[Server] = field(default=None, repr=False)

    async def reevaluate_after(self, *tools: ToolRef) -> Sequence[Relationship]:
        """Creates reevaluation relationships between this tag and one or more tools.

        When any of the tools is called, all guidelines tagged with this tag
        will be reevaluated."""
        if self._server is None:
            raise SDKError(
                "Tag reevaluation can only be performed during the server startup scope."
            )

        if not tools:
            raise SDKError("At least one tool must be provided for reevaluation.")

        results: list[Relationship] = []
        for t in tools:
            relationship = await self._server._container[RelationshipStore].create_relationship(
                source=RelationshipEntity(
                    id=self.id,
                    kind=RelationshipEntityKind.TAG_ALL,
                ),
                target=RelationshipEntity(
                    id=_tool_ref_to_id(t),
                    kind=RelationshipEntityKind.TOOL,
                ),
                kind=RelationshipKind.REEVALUATION,
            )

            results.append(
                Relationship(
                    id=relationship.id,
                    kind=relationship.kind,
                    source=relationship.source.id,
                    target=relationship.target.id,
                )
            )

        return results

    async def _create_relationship(
        self,
        target: Guideline | Journey | Tag | AnyOf | AllOf,
        kind: RelationshipKind,
        group_id: str | None = None,
    ) -> Relationship:
        server = self._server
        if server is None:
            raise SDKError("Tag relationships can only be created during the server startup scope.")

        entity_source = RelationshipEntity(id=self.id, kind=RelationshipEntityKind.TAG_ALL)

        if isinstance(target, Guideline):
            entity_target = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.GUIDELINE)
        elif isinstance(target, AnyOf):
            entity_target = RelationshipEntity(
                id=target.tag.id, kind=RelationshipEntityKind.TAG_ANY
            )
        elif isinstance(target, AllOf):
            entity_target = RelationshipEntity(
                id=target.tag.id, kind=RelationshipEntityKind.TAG_ALL
            )
        elif isinstance(target, Tag):
            entity_target = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.TAG_ALL)
        else:
            entity_target = RelationshipEntity(
                id=_Tag.for_journey_id(target.id).id, kind=RelationshipEntityKind.TAG_ALL
            )

        relationship = await server._container[RelationshipStore].create_relationship(
            source=entity_source,
            target=entity_target,
            kind=kind,
            group_id=group_id,
        )

        return Relationship(
            id=relationship.id,
            kind=relationship.kind,
            source=relationship.source.id,
            target=relationship.target.id,
        )

    async def prioritize_over(
        self, *targets: Guideline | Journey | Tag | AllOf
    ) -> Sequence[Relationship]:
        """Creates priority relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for prioritization.")

        return [await self._create_relationship(t, RelationshipKind.PRIORITY) for t in targets]

    async def exclude(self, *targets: Guideline | Journey | Tag | AllOf) -> Sequence[Relationship]:
        """Alias for prioritize_over. Creates priority relationships with other guidelines, journeys, or tags."""
        return await self.prioritize_over(*targets)

    async def depend_on(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates dependency relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        return [await self._create_relationship(t, RelationshipKind.DEPENDENCY) for t in targets]

    async def depend_on_any(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates OR dependency relationships. At least one target must be active."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        group_id = str(uuid.uuid4())
        return [
            await self._create_relationship(t, RelationshipKind.DEPENDENCY_ANY, group_id=group_id)
            for t in targets
        ]


@dataclass(frozen=True)
class AnyOf:
    """Wraps a Tag to indicate ANY semantics in a dependency relationship.

    When used as a target in ``depend_on()``, the dependency is satisfied if
    at least one entity tagged with the given tag is active.
    """

    tag: Tag


@dataclass(frozen=True)
class AllOf:
    """Wraps a Tag to indicate ALL semantics in a dependency relationship.

    When used as a target in ``depend_on()``, ``prioritize_over()``, or ``exclude()``,
    the dependency/priority is evaluated against all entities tagged with the given tag.
    This is also the default when a bare ``Tag`` is passed.
    """

    tag: Tag


def _tags_from_ids(tag_ids: Sequence[TagId]) -> list[Tag]:
    """Convert a sequence of TagIds to a list of Tag objects, using the ID as the name."""
    return [Tag(id=tag_id, name=str(tag_id)) for tag_id in tag_ids]


def _resolve_journey_triggers_kwarg(
    triggers: list[str | Guideline] | None,
    conditions: list[str | Guideline] | None,
) -> list[str | Guideline]:
    """Resolve the journey ``triggers`` argument with back-compat for the
    deprecated ``conditions`` alias.

    Emits a ``DeprecationWarning`` if ``conditions`` was used and raises if
    both are provided.
    """
    if conditions is not None:
        if triggers is not None:
            raise SDKError(
                "Pass either 'triggers' (preferred) or 'conditions' (deprecated), not both."
            )
        import warnings

        warnings.warn(
            "The 'conditions' parameter on create_journey is deprecated. Use 'triggers' instead.",
            DeprecationWarning,
            stacklevel=3,
        )
        return list(conditions)
    if triggers is None:
        raise SDKError("create_journey requires 'triggers' to be provided.")
    return list(triggers)


@dataclass(frozen=True)
class Relationship:
    """A relationship between two entities in the system."""

    id: RelationshipId
    kind: RelationshipKind
    source: RelationshipEntityId
    target: RelationshipEntityId


@dataclass(frozen=True)
class ToolCall:
    """Represents a tool call by the agent."""

    tool_id: ToolId
    arguments: Mapping[str, JSONSerializable]
    result: ToolResult


@dataclass(frozen=True)
class GuidelineMatch:
    """Result of a custom guideline matcher."""

    id: GuidelineId
    """The ID of the guideline that was matched."""

    matched: bool
    """Whether the guideline matched the current context."""

    rationale: str
    """Explanation of why the guideline matched or didn't match."""


@dataclass
class GuidelineMatchingContext:
    """Context for custom guideline matchers, providing information about the current interaction."""

    server: Server
    container: Container
    logger: Logger
    tracer: Tracer
    session: Session
    agent: Agent
    customer: Customer
    variables: Mapping[Variable, JSONSerializable]
    staged_events: Sequence[EmittedEvent]

    @property
    def staged_tool_calls(self) -> Sequence[ToolCall]:
        """Returns the staged events that are tool calls."""
        core_tool_calls = chain.from_iterable(
            [
                cast(ToolEventData, e.data)["tool_calls"]
                for e in self.staged_events
                if e.kind == EventKind.TOOL
            ]
        )

        return [
            ToolCall(
                tool_id=ToolId.from_string(call["tool_id"]),
                arguments=call["arguments"],
                result=ToolResult(
                    data=call["result"].get("data"),
                    metadata=call["result"].get("metadata"),
                    control=call["result"].get("control"),
                    canned_responses=call["result"].get("canned_responses"),
                    canned_response_fields=call["result"].get("canned_response_fields"),
                    guidelines=call["result"].get("guidelines"),
                ),
            )
            for call in core_tool_calls
        ]

    @classmethod
    async def _from_core(
        cls,
        core_ctx: _GuidelineMatchingContext,
        server: Server,
        container: Container,
    ) -> GuidelineMatchingContext:
        """Convert a core GuidelineMatchingContext to an SDK GuidelineMatchingContext."""
        agent = await server.get_agent(id=core_ctx.agent.id)
        customer = await server.get_customer(id=core_ctx.customer.id)
        interaction = Interaction(core_ctx.interaction_history)

        return cls(
            server=server,
            container=container,
            logger=container[Logger],
            tracer=container[Tracer],
            session=Session(
                id=core_ctx.session.id,
                interaction=interaction,
                metadata=core_ctx.session.metadata,
                labels=core_ctx.session.labels,
                customer=customer,
                agent=agent,
                mode=core_ctx.session.mode,
                title=core_ctx.session.title,
            ),
            agent=agent,
            customer=customer,
            variables={
                await agent.get_variable(id=var.id): val.data
                for var, val in core_ctx.context_variables
            },
            staged_events=core_ctx.staged_events,
        )


async def _match_always(ctx: GuidelineMatchingContext, g: Guideline) -> GuidelineMatch:
    return GuidelineMatch(
        id=g.id,
        matched=True,
        rationale="Always relevant",
    )


MATCH_ALWAYS = _match_always


@dataclass
class JourneyStateMatch:
    """Result of a journey state transition match."""

    state_id: JourneyStateId
    """The ID of the journey state that was matched."""

    transition_id: JourneyTransitionId
    """The ID of the journey transition that was matched."""

    matched: bool
    """Whether the journey state transition matched the current context."""

    rationale: str | None
    """Explanation of why the state transition matched or didn't match."""


@dataclass
class JourneyMatch:
    """Result of a journey match."""

    journey_id: JourneyId
    """The ID of the journey that was matched."""


@dataclass(frozen=True)
class Guideline:
    """A guideline that defines a condition and an action to be taken."""

    MATCH_ALWAYS = _match_always

    id: GuidelineId
    condition: str
    action: str | None
    tags: Sequence[Tag]
    metadata: Mapping[str, JSONSerializable]

    _server: Server
    _container: Container

    labels: set[str] = field(default_factory=set)
    priority: int = 0

    async def entail(self, guideline: Guideline) -> Relationship:
        """Creates an entailment relationship with another guideline."""
        return await self._create_relationship(
            target=guideline,
            kind=RelationshipKind.ENTAILMENT,
            direction="source",
        )

    async def prioritize_over(
        self, *targets: Guideline | Journey | Tag | AllOf
    ) -> Sequence[Relationship]:
        """Creates priority relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for prioritization.")

        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.PRIORITY,
                direction="source",
            )
            for t in targets
        ]

    async def exclude(self, *targets: Guideline | Journey | Tag | AllOf) -> Sequence[Relationship]:
        """Alias for prioritize_over. Creates priority relationships with other guidelines, journeys, or tags."""
        return await self.prioritize_over(*targets)

    async def depend_on(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates dependency relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.DEPENDENCY,
                direction="source",
            )
            for t in targets
        ]

    async def depend_on_any(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates OR dependency relationships. At least one target must be active."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        group_id = str(uuid.uuid4())
        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.DEPENDENCY_ANY,
                direction="source",
                group_id=group_id,
            )
            for t in targets
        ]

    async def disambiguate(
        self,
        targets: Sequence[Guideline | Journey],
    ) -> Sequence[Relationship]:
        if len(targets) < 2:
            raise SDKError(
                f"At least two targets are required for disambiguation (got {len(targets)})."
            )

        guideline_targets = [t for t in targets if isinstance(t, Guideline)]
        journey_triggers = list(
            chain.from_iterable([t.triggers for t in targets if isinstance(t, Journey)])
        )

        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.DISAMBIGUATION,
                direction="source",
            )
            for t in guideline_targets + journey_triggers
        ]

    async def reevaluate_after(self, *tools: ToolRef) -> Sequence[Relationship]:
        """Creates reevaluation relationships with one or more tools."""
        if not tools:
            raise SDKError("At least one tool must be provided for reevaluation.")

        results: list[Relationship] = []
        for t in tools:
            relationship = await self._container[RelationshipStore].create_relationship(
                source=RelationshipEntity(
                    id=self.id,
                    kind=RelationshipEntityKind.GUIDELINE,
                ),
                target=RelationshipEntity(
                    id=_tool_ref_to_id(t),
                    kind=RelationshipEntityKind.TOOL,
                ),
                kind=RelationshipKind.REEVALUATION,
            )

            results.append(
                Relationship(
                    id=relationship.id,
                    kind=relationship.kind,
                    source=relationship.source.id,
                    target=relationship.target.id,
                )
            )

        return results

    async def attach_retriever(
        self,
        retriever: Callable[[RetrieverContext], Awaitable[RetrieverResult | None]],
        id: str | None = None,
    ) -> None:
        """Attaches a retriever that runs only when this guideline is matched."""

        def is_guideline_matched(ctx: EngineContext) -> bool:
            return any(
                m.guideline.id == self.id for m in ctx.state.ordinary_guideline_matches
            ) or any(m.guideline.id == self.id for m in ctx.state.tool_enabled_guideline_matches)

        self._server._attach_conditional_retriever(
            retriever_id=id or f"guideline-retriever-{self.id}",
            retriever=retriever,
            should_run=is_guideline_matched,
        )

    async def _create_relationship(
        self,
        target: Guideline | Journey | Tag | AnyOf | AllOf,
        kind: RelationshipKind,
        direction: Literal["source", "target"],
        group_id: str | None = None,
    ) -> Relationship:
        if isinstance(target, Guideline):
            other_entity = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.GUIDELINE)
        elif isinstance(target, AnyOf):
            other_entity = RelationshipEntity(id=target.tag.id, kind=RelationshipEntityKind.TAG_ANY)
        elif isinstance(target, AllOf):
            other_entity = RelationshipEntity(id=target.tag.id, kind=RelationshipEntityKind.TAG_ALL)
        elif isinstance(target, Tag):
            other_entity = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.TAG_ALL)
        else:
            other_entity = RelationshipEntity(
                id=_Tag.for_journey_id(target.id).id, kind=RelationshipEntityKind.TAG_ALL
            )

        self_entity = RelationshipEntity(id=self.id, kind=RelationshipEntityKind.GUIDELINE)

        if direction == "source":
            entity_source = self_entity
            entity_target = other_entity
        else:
            entity_source = other_entity
            entity_target = self_entity

        relationship = await self._container[RelationshipStore].create_relationship(
            source=entity_source,
            target=entity_target,
            kind=kind,
            group_id=group_id,
        )

        return Relationship(
            id=relationship.id,
            kind=relationship.kind,
            source=relationship.source.id,
            target=relationship.target.id,
        )


TState = TypeVar("TState", bound="JourneyState")


@dataclass(frozen=True)
class JourneyTransition(Generic[TState]):
    """A transition between two states in a journey."""

    id: JourneyTransitionId
    condition: str | None
    source: JourneyState
    target: TState
    metadata: Mapping[str, JSONSerializable]


@dataclass(frozen=True)
class JourneyState:
    """A state in a journey that can be transitioned to or from."""

    id: JourneyStateId
    action: str | None
    tools: Sequence[ToolRef]
    metadata: Mapping[str, JSONSerializable]
    description: str | None

    _journey: Journey | None

    @property
    def _internal_action(self) -> str | None:
        return self.action or cast(str | None, self.metadata.get("internal_action"))

    async def _fork(self) -> JourneyTransition[ForkJourneyState]:
        return cast(
            JourneyTransition[ForkJourneyState],
            await self._transition(
                condition=None,
                state=None,
                action=None,
                tools=[],
                fork=True,
            ),
        )

    async def _transition(
        self,
        *,
        condition: str | None = None,
        state: TState | None = None,
        action: str | None = None,
        description: str | None = None,
        tools: Sequence[ToolRef] = [],
        journey: Journey | None = None,
        fork: bool = False,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        composition_mode: CompositionMode | None = None,
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[JourneyState]:
        if not self._journey:
            raise SDKError("EndState cannot be connected to any other states.")

        transitions = [t for t in self._journey.transitions if t.source == self]

        if len(transitions) > 0 and (not condition or any(not e.condition for e in transitions)):
            raise SDKError(
                "Cannot connect a new state without a condition if there are already connected states without conditions."
            )

        actual_state: JourneyState | None = None

        if state is not None:
            actual_state = state
        elif tools:
            actual_state = await self._journey._create_state(
                ToolJourneyState,
                action=action,
                description=description,
                tools=tools,
                metadata=metadata,
                composition_mode=composition_mode,
                id=id,
                labels=labels,
            )

            [
                await self._journey._container[RelationshipStore].create_relationship(
                    source=RelationshipEntity(
                        id=_Tag.for_journey_node_id(actual_state.id).id,
                        kind=RelationshipEntityKind.TAG_ALL,
                    ),
                    target=RelationshipEntity(
                        id=_tool_ref_to_id(t),
                        kind=RelationshipEntityKind.TOOL,
                    ),
                    kind=RelationshipKind.REEVALUATION,
                )
                for t in tools
            ]

        elif action:
            actual_state = await self._journey._create_state(
                ChatJourneyState,
                action=action,
                description=description,
                tools=[],
                metadata=metadata,
                composition_mode=composition_mode,
                id=id,
                labels=labels,
            )
        elif fork:
            actual_state = await self._journey._create_state(
                ForkJourneyState,
                description=description,
                metadata=metadata,
                composition_mode=composition_mode,
                id=id,
                labels=labels,
            )
        elif journey:
            if canned_responses:
                raise SDKError(
                    "Canned responses cannot be associated when transitioning to a sub-journey."
                )

            return await self._transition_to_sub_journey(
                journey=journey,
                condition=condition,
            )

        transition = await self._journey.create_transition(
            condition=condition,
            source=self,
            target=actual_state or END_JOURNEY,
            on_selected=on_selected,
            on_message=on_message,
            canned_response_field_provider=canned_response_field_provider,
        )

        if actual_state:
            cast(list[JourneyState], self._journey.states).append(actual_state)

            for canrep_id in canned_responses:
                await self._journey._container[CannedResponseStore].upsert_tag(
                    canned_response_id=canrep_id,
                    tag_id=_Tag.for_journey_node_id(actual_state.id).id,
                )

        cast(list[JourneyTransition[JourneyState]], self._journey.transitions).append(transition)

        return transition

    async def _transition_to_sub_journey(
        self,
        journey: Journey,
        condition: str | None = None,
    ) -> JourneyTransition[JourneyState]:
        if self._journey is None:
            raise SDKError(
                "Cannot transition to sub-journey from a state without a parent journey."
            )

        # Create mappings for states and transitions for easy lookup
        state_mapping: dict[JourneyStateId, JourneyState] = {}
        transitions_by_source: dict[JourneyStateId, list[JourneyTransition[JourneyState]]] = (
            defaultdict(list)
        )
        for transition in journey.transitions:
            transitions_by_source[transition.source.id].append(transition)

        # Create merge fork state for leaf nodes
        fork_state = await self._journey._create_state(
            ForkJourneyState,
            metadata={"sub_journey_id": journey.id},
        )

        async def create_mapped_state(state: JourneyState) -> JourneyState:
            assert self._journey  # We already checked this above

            metadata = dict(state.metadata)
            metadata["journey_node"] = {
                **cast(dict[str, JSONSerializable], metadata.get("journey_node", {})),
                "journey_id": self._journey.id,
                "sub_journey_id": journey.id,
            }

            # Create the new state
            if state.tools:
                new_state = cast(
                    JourneyState,
                    await self._journey._create_state(
                        ToolJourneyState,
                        action=state.action,
                        tools=state.tools,
                        metadata=metadata,
                    ),
                )

                [
                    await self._journey._container[RelationshipStore].create_relationship(
                        source=RelationshipEntity(
                            id=_Tag.for_journey_node_id(new_state.id).id,
                            kind=RelationshipEntityKind.TAG_ALL,
                        ),
                        target=RelationshipEntity(
                            id=_tool_ref_to_id(t),
                            kind=RelationshipEntityKind.TOOL,
                        ),
                        kind=RelationshipKind.REEVALUATION,
                    )
                    for t in state.tools
                ]

            elif (
                isinstance(state.metadata.get("journey_node"), dict)
                and cast(dict[str, JSONSerializable], state.metadata.get("journey_node")).get(
                    "kind"
                )
                == "fork"
            ):
                new_state = cast(
                    JourneyState,
                    await self._journey._create_state(
                        ForkJourneyState,
                        metadata=metadata,
                    ),
                )
            else:
                new_state = cast(
                    JourneyState,
                    await self._journey._create_state(
                        ChatJourneyState,
                        action=state.action,
                        tools=[],
                        metadata=metadata,
                    ),
                )

            # Copy canned responses from the original state to the new state
            original_state_tag = _Tag.for_journey_node_id(state.id).id
            new_state_tag = _Tag.for_journey_node_id(new_state.id).id

            # Get all canned responses associated with the original state
            canned_response_store = self._journey._container[CannedResponseStore]
            canreps = await canned_response_store.list_canned_responses(tags=[original_state_tag])

            # Associate them with the new state
            for canrep in canreps:
                await canned_response_store.upsert_tag(
                    canned_response_id=canrep.id, tag_id=new_state_tag
                )

            return new_state

        # Create entry point - either self directly or via a condition fork
        entry_state: JourneyState

        if condition:
            # Create a fork state for the condition
            entry_fork = await self._journey._create_state(
                ForkJourneyState,
                metadata={"sub_journey_id": journey.id},
            )
            cast(list[JourneyState], self._journey.states).append(entry_fork)

            # Create transition from self to the entry fork with condition
            entry_transition = await self._journey.create_transition(
                condition=condition,
                source=self,
                target=entry_fork,
            )
            cast(list[JourneyTransition[JourneyState]], self._journey.transitions).append(
                cast(JourneyTransition[JourneyState], entry_transition)
            )
            entry_state = entry_fork
        else:
            entry_state = self

        # Traverse the journey starting from the root
        queue: deque[tuple[JourneyStateId, JourneyState | None]] = deque()
        visited: set[JourneyStateId] = set()

        # Skip the root state and go directly to its target states
        root_transitions = transitions_by_source[journey._start_state_id]

        # Process each transition from the root state
        for root_transition in root_transitions:
            target_state_id = root_transition.target.id

            if target_state_id == END_JOURNEY.id:
                # Root transitions directly to END_JOURNEY - connect to fork
                new_transition = await self._journey.create_transition(
                    condition=root_transition.condition,
                    source=entry_state,
                    target=fork_state,
                )
                cast(list[JourneyTransition[JourneyState]], self._journey.transitions).append(
                    cast(JourneyTransition[JourneyState], new_transition)
                )
            else:
                # Create the target state and add it to processing queue
                if target_state := next(
                    (s for s in journey.states if s.id == target_state_id), None
                ):
                    new_state = await create_mapped_state(target_state)
                    state_mapping[target_state_id] = new_state
                    cast(list[JourneyState], self._journey.states).append(new_state)

                    # Create transition from entry_state to the target
                    new_transition = await self._journey.create_transition(
                        condition=root_transition.condition,
                        source=entry_state,
                        target=cast(ForkJourneyState, new_state),
                    )
                    cast(list[JourneyTransition[JourneyState]], self._journey.transitions).append(
                        cast(JourneyTransition[JourneyState], new_transition)
                    )

                    # Add to queue for further processing
                    queue.append((target_state_id, new_state))

        while queue:
            current_state_id, mapped_source_state = queue.popleft()

            if current_state_id in visited:
                continue

            visited.add(current_state_id)

            # Get the current state from the sub-journey
            current_state = next((s for s in journey.states if s.id == current_state_id), None)
            if not current_state:
                continue

            # Check if this state has no outgoing transitions (leaf state)
            state_transitions = transitions_by_source.get(current_state_id, [])
            if (
                not state_transitions
                and mapped_source_state
                and current_state_id != journey._start_state_id
            ):
                # This is a leaf state - connect it to the fork
                new_transition = await self._journey.create_transition(
                    condition=None,
                    source=mapped_source_state,
                    target=fork_state,
                )
                cast(list[JourneyTransition[JourneyState]], self._journey.transitions).append(
                    cast(JourneyTransition[JourneyState], new_transition)
                )
                continue

            # Process all transitions from this state
            for transition in state_transitions:
                target_state_id = transition.target.id

                # Handle END_JOURNEY transitions - connect to fork
                if target_state_id == END_JOURNEY.id:
                    if mapped_source_state:
                        new_transition = await self._journey.create_transition(
                            condition=transition.condition,
                            source=mapped_source_state,
                            target=fork_state,
                        )
                        cast(
                            list[JourneyTransition[JourneyState]], self._journey.transitions
                        ).append(cast(JourneyTransition[JourneyState], new_transition))
                        # Transition to fork created
                    continue

                # Get or create the target state
                if target_state_id not in state_mapping:
                    if target_state := next(
                        (s for s in journey.states if s.id == target_state_id), None
                    ):
                        new_state = await create_mapped_state(target_state)
                        state_mapping[target_state_id] = new_state
                        cast(list[JourneyState], self._journey.states).append(new_state)

                # Create the transition only if target state is in mapping
                if target_state_id in state_mapping:
                    target_mapped_state = state_mapping[target_state_id]
                    if mapped_source_state:
                        new_transition = await self._journey.create_transition(
                            condition=transition.condition,
                            source=mapped_source_state,
                            target=cast(ForkJourneyState, target_mapped_state),
                        )

                        cast(
                            list[JourneyTransition[JourneyState]], self._journey.transitions
                        ).append(cast(JourneyTransition[JourneyState], new_transition))

                    # Add target to queue for further processing
                    queue.append((target_state_id, target_mapped_state))
                else:
                    # Target state not in mapping - this is a transition to another journey
                    # Connect the source state to the fork state to exit this sub-journey
                    if mapped_source_state:
                        new_transition = await self._journey.create_transition(
                            condition=transition.condition,
                            source=mapped_source_state,
                            target=fork_state,
                        )
                        cast(
                            list[JourneyTransition[JourneyState]], self._journey.transitions
                        ).append(cast(JourneyTransition[JourneyState], new_transition))

        # We create a transient transition from self to the fork state to represent the exit point
        result_transition = JourneyTransition[JourneyState](
            id=JourneyTransitionId("transient"),
            condition=condition,
            source=self,
            target=fork_state,
            metadata={},
        )

        return result_transition

    async def attach_retriever(
        self,
        retriever: Callable[[RetrieverContext], Awaitable[RetrieverResult | None]],
        id: str | None = None,
    ) -> None:
        """Attaches a retriever that runs only when this journey state is active."""
        from itertools import chain

        from parlant.core.journey_guideline_projection import (
            extract_node_id_from_journey_node_guideline_id,
        )

        if self._journey is None:
            raise SDKError("Cannot attach retriever to a journey state without a parent journey.")

        def is_journey_state_active(ctx: EngineContext) -> bool:
            for m in chain(
                ctx.state.ordinary_guideline_matches,
                ctx.state.tool_enabled_guideline_matches,
            ):
                # Check if this is a journey node guideline
                if "journey_node" not in m.guideline.metadata:
                    continue

                node_id = extract_node_id_from_journey_node_guideline_id(m.guideline.id)

                if node_id == self.id:
                    return True

            return False

        self._journey._server._attach_conditional_retriever(
            retriever_id=id or f"journey-state-retriever-{self.id}",
            retriever=retriever,
            should_run=is_journey_state_active,
        )


END_JOURNEY = JourneyState(
    id=JourneyStore.END_NODE_ID,
    action=None,
    tools=[],
    metadata={},
    description=None,
    _journey=None,
)
"""A special state used to indicate the end of a journey."""


def _validate_transition_parameters(
    *,
    condition: str | None = None,
    chat_state: str | None = None,
    tool_instruction: str | None = None,
    state: Any = None,
    tool_state: Any = None,
    journey: Any = None,
    canned_responses: Sequence[CannedResponseId] = [],
    metadata: Mapping[str, JSONSerializable] = {},
    on_selected: Any = None,
    is_fork_state: bool = False,
) -> None:
    """Validate transition parameters against overload signatures."""

    # Determine which target parameter is being used
    target_param = None
    has_tool_state = tool_state and (
        isinstance(tool_state, (ToolEntry, ToolId))
        or (isinstance(tool_state, Sequence) and len(tool_state) > 0)
    )

    if state is not None:
        target_param = "state"
    elif chat_state is not None:
        target_param = "chat_state"
    elif has_tool_state:
        target_param = "tool_state"
    elif journey is not None:
        target_param = "journey"
    else:
        raise SDKError(
            "Must provide at least one target parameter: chat_state, state, tool_state, or journey."
        )

    # Check for multiple target parameters
    target_count = 0
    if state is not None:
        target_count += 1
    if chat_state is not None:
        target_count += 1
    if has_tool_state:
        target_count += 1
    if journey is not None:
        target_count += 1

    if target_count > 1:
        provided = []
        if state is not None:
            provided.append("state")
        if chat_state is not None:
            provided.append("chat_state")
        if has_tool_state:
            provided.append("tool_state")
        if journey is not None:
            provided.append("journey")
        raise SDKError(
            f"Cannot provide multiple target parameters simultaneously: {', '.join(provided)}. "
            "Please specify only one of: chat_state, state, tool_state, or journey."
        )

    # Validate parameter combinations based on overload signatures
    if target_param == "journey":
        # Journey overload: only condition and journey allowed
        invalid_params = []
        if canned_responses:
            invalid_params.append("canned_responses")
        if metadata:
            invalid_params.append("metadata")
        if on_selected is not None:
            invalid_params.append("on_selected")
        if tool_instruction is not None:
            invalid_params.append("tool_instruction")

        if invalid_params:
            raise SDKError(
                f"Journey transitions do not support the following parameters: {', '.join(invalid_params)}. "
                "Only 'condition' and 'journey' are allowed for journey transitions."
            )

    elif target_param == "tool_state":
        # Tool state overloads: tool_instruction is optional but other params should be allowed
        if tool_instruction is not None:
            # This is valid - tool_instruction + tool_state combination
            pass
        # canned_responses, metadata, on_selected are all allowed for tool_state transitions

    elif target_param in ["state", "chat_state"]:
        # State and chat_state overloads: tool_instruction not allowed
        if tool_instruction is not None:
            raise SDKError(
                f"tool_instruction cannot be used with {target_param}. "
                "tool_instruction is only valid when using tool_state."
            )
        # canned_responses, metadata, on_selected are all allowed

    # Special validation for ForkJourneyState
    if is_fork_state and target_param != "journey":
        if condition is None:
            raise SDKError(
                "ForkJourneyState requires a condition (except when transition to a journey)."
            )


class InitialJourneyState(JourneyState):
    """A special state used to indicate the initial state of a journey."""

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        state: TState,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[TState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ChatJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: ToolRef,
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: Sequence[ToolRef],
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        journey: Journey,
    ) -> JourneyTransition[ForkJourneyState]: ...

    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str | None = None,
        tool_instruction: str | None = None,
        state: TState | None = None,
        tool_state: ToolRef | Sequence[ToolRef] = [],
        journey: Journey | None = None,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[Any]:
        # Validate parameters against overload signatures
        _validate_transition_parameters(
            condition=condition,
            chat_state=chat_state,
            tool_instruction=tool_instruction,
            state=state,
            tool_state=tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            is_fork_state=False,
        )

        return await self._transition(
            condition=condition,
            state=state,
            action=chat_state or tool_instruction,
            description=description,
            tools=[tool_state] if isinstance(tool_state, (ToolEntry, ToolId)) else tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            on_message=on_message,
            composition_mode=composition_mode,
            canned_response_field_provider=canned_response_field_provider,
            id=id,
            labels=labels,
        )


class ToolJourneyState(JourneyState):
    """A state in a journey that represents a tool being used."""

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        state: TState,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[TState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ChatJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: ToolRef,
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: Sequence[ToolRef],
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        journey: Journey,
    ) -> JourneyTransition[ForkJourneyState]: ...

    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str | None = None,
        tool_instruction: str | None = None,
        state: TState | None = None,
        tool_state: ToolRef | Sequence[ToolRef] = [],
        journey: Journey | None = None,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[Any]:
        # Validate parameters against overload signatures
        _validate_transition_parameters(
            condition=condition,
            chat_state=chat_state,
            tool_instruction=tool_instruction,
            state=state,
            tool_state=tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            is_fork_state=False,
        )

        return await self._transition(
            condition=condition,
            state=state,
            action=chat_state,
            description=description,
            tools=[tool_state] if isinstance(tool_state, (ToolEntry, ToolId)) else tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            on_message=on_message,
            composition_mode=composition_mode,
            canned_response_field_provider=canned_response_field_provider,
            id=id,
            labels=labels,
        )

    async def fork(self) -> JourneyTransition[ForkJourneyState]:
        return await super()._fork()


class ChatJourneyState(JourneyState):
    """A state in a journey that represents a chat interaction."""

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        state: TState,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[TState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ChatJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: ToolRef,
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        tool_instruction: str | None = None,
        tool_state: Sequence[ToolRef],
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        journey: Journey,
    ) -> JourneyTransition[ForkJourneyState]: ...

    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str | None = None,
        tool_instruction: str | None = None,
        state: TState | None = None,
        tool_state: ToolRef | Sequence[ToolRef] = [],
        journey: Journey | None = None,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[Any]:
        # Validate parameters against overload signatures
        _validate_transition_parameters(
            condition=condition,
            chat_state=chat_state,
            tool_instruction=tool_instruction,
            state=state,
            tool_state=tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            is_fork_state=False,
        )

        return await self._transition(
            condition=condition,
            state=state,
            action=chat_state or tool_instruction,
            description=description,
            tools=[tool_state] if isinstance(tool_state, (ToolEntry, ToolId)) else tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            on_message=on_message,
            composition_mode=composition_mode,
            canned_response_field_provider=canned_response_field_provider,
            id=id,
            labels=labels,
        )

    async def fork(self) -> JourneyTransition[ForkJourneyState]:
        return await super()._fork()


class ForkJourneyState(JourneyState):
    """A state in a journey that represents a conditional fork in the journey."""

    @overload
    async def transition_to(
        self,
        *,
        condition: str,
        state: TState,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[TState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str,
        chat_state: str,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ChatJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str,
        tool_instruction: str | None = None,
        tool_state: ToolRef,
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str,
        tool_instruction: str | None = None,
        tool_state: Sequence[ToolRef],
        description: str | None = None,
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[ToolJourneyState]: ...

    @overload
    async def transition_to(
        self,
        *,
        condition: str | None = None,
        journey: Journey,
    ) -> JourneyTransition[ForkJourneyState]: ...

    async def transition_to(
        self,
        *,
        condition: str | None = None,
        chat_state: str | None = None,
        tool_instruction: str | None = None,
        state: TState | None = None,
        tool_state: ToolRef | Sequence[ToolRef] = [],
        journey: Journey | None = None,
        description: str | None = None,
        canned_responses: Sequence[CannedResponseId] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        composition_mode: CompositionMode | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> JourneyTransition[Any]:
        # Validate parameters against overload signatures
        _validate_transition_parameters(
            condition=condition,
            chat_state=chat_state,
            tool_instruction=tool_instruction,
            state=state,
            tool_state=tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            is_fork_state=True,
        )

        return await self._transition(
            condition=condition,
            state=state,
            action=chat_state or tool_instruction,
            description=description,
            tools=[tool_state] if isinstance(tool_state, (ToolEntry, ToolId)) else tool_state,
            journey=journey,
            canned_responses=canned_responses,
            metadata=metadata,
            on_selected=on_selected,
            on_message=on_message,
            composition_mode=composition_mode,
            canned_response_field_provider=canned_response_field_provider,
            id=id,
            labels=labels,
        )


@dataclass(frozen=True)
class Journey:
    """A journey that consists of multiple states and transitions."""

    id: JourneyId
    title: str
    description: str
    triggers: list[Guideline]
    states: Sequence[JourneyState]
    transitions: Sequence[JourneyTransition[JourneyState]]
    tags: Sequence[Tag]
    composition_mode: CompositionMode | None

    _start_state_id: JourneyStateId
    _server: Server
    _container: Container

    labels: set[str] = field(default_factory=set)
    priority: int = 0

    @property
    @deprecated("Use 'triggers' instead of 'conditions'")
    def conditions(self) -> list[Guideline]:
        """Deprecated alias for ``triggers``."""
        return self.triggers

    @property
    def initial_state(self) -> InitialJourneyState:
        """Returns the initial state of the journey."""
        return cast(
            InitialJourneyState, next(n for n in self.states if n.id == self._start_state_id)
        )

    async def _create_state(
        self,
        state_type: type[TState],
        action: str | None = None,
        description: str | None = None,
        tools: Sequence[ToolRef] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        composition_mode: CompositionMode | None = None,
        id: JourneyStateId | None = None,
        labels: Iterable[str] = (),
    ) -> TState:
        metadata_type = {
            ForkJourneyState: "fork",
            ToolJourneyState: "tool",
            ChatJourneyState: "chat",
        }[state_type]

        await _enable_tool_refs(self._server._plugin_server, tools)

        if len(tools) == 1 and not action:
            first = tools[0]
            tool_name = first.tool.name if isinstance(first, ToolEntry) else first.tool_name
            action = f"Use the tool {tool_name}"

        # Node-level composition_mode overrides journey-level
        # If no node-level composition_mode provided, inherit from journey
        effective_composition_mode = (
            composition_mode if composition_mode is not None else self.composition_mode
        )

        node = await self._container[JourneyStore].create_node(
            journey_id=self.id,
            action=action,
            tools=[_tool_ref_to_id(t) for t in tools],
            description=description,
            composition_mode=CompositionMode._to_core_composition_mode(effective_composition_mode),
            id=id,
            labels=set(labels) if labels else None,
        )

        node = await self._container[JourneyStore].set_node_metadata(
            node_id=node.id,
            key="journey_node",
            value={"kind": metadata_type},
        )

        for k, v in metadata.items():
            node = await self._container[JourneyStore].set_node_metadata(
                node_id=node.id,
                key=k,
                value=v,
            )

        return state_type(
            id=node.id,
            action=action,
            tools=tools,
            metadata=node.metadata,
            description=node.description,
            _journey=self,
        )

    @staticmethod
    async def _create_journey_state_handler_shim(
        user_callback: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]],
        state_id: JourneyStateId,
        transition_id: JourneyEdgeId,
        core_ctx: EngineContext,
        core_match: _GuidelineMatch,
    ) -> None:
        """Generic shim that translates core types to SDK JourneyStateMatch and calls user callback."""
        sdk_match = JourneyStateMatch(
            state_id=state_id,
            matched=True,
            rationale=core_match.rationale,
            transition_id=transition_id,
        )
        await user_callback(core_ctx, sdk_match)

    async def create_transition(
        self,
        condition: str | None,
        source: JourneyState,
        target: TState,
        on_selected: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyStateMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
    ) -> JourneyTransition[TState]:
        """Creates a transition between two states in the journey."""

        self._server._advance_creation_progress()

        transition = await self._container[JourneyStore].create_edge(
            journey_id=self.id,
            source=source.id,
            target=target.id if target else END_JOURNEY.id,
            condition=condition,
        )

        # Register handlers if provided
        if target is not None:
            if (
                on_selected is not None
                or on_message is not None
                or canned_response_field_provider is not None
            ):
                guideline_id = format_journey_node_guideline_id(target.id, transition.id)
                engine_hooks = self._container[EngineHooks]

                if on_selected is not None:
                    shim = partial(
                        Journey._create_journey_state_handler_shim,
                        on_selected,
                        target.id,
                        transition.id,
                    )
                    engine_hooks.on_guideline_selected_handlers[guideline_id].append(shim)

                if on_message is not None:
                    shim = partial(
                        Journey._create_journey_state_handler_shim,
                        on_message,
                        target.id,
                        transition.id,
                    )
                    engine_hooks.on_guideline_message_handlers[guideline_id].append(shim)

                if canned_response_field_provider is not None:
                    shim = partial(
                        Server._create_field_provider_shim,
                        canned_response_field_provider,
                    )
                    engine_hooks.on_guideline_selected_handlers[guideline_id].append(shim)

        return JourneyTransition[TState](
            id=transition.id,
            condition=condition,
            source=source,
            target=target,
            metadata=transition.metadata,
        )

    async def create_guideline(
        self,
        condition: str | None = None,
        action: str | None = None,
        description: str | None = None,
        tools: Iterable[ToolRef] = [],
        metadata: dict[str, JSONSerializable] = {},
        canned_responses: Sequence[CannedResponseId] = [],
        criticality: Criticality = Criticality.MEDIUM,
        composition_mode: CompositionMode | None = None,
        matcher: Callable[[GuidelineMatchingContext, Guideline], Awaitable[GuidelineMatch]]
        | None = None,
        on_selected: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        tags: Sequence[Tag] = [],
        id: GuidelineId | None = None,
        title: str | None = None,
        track: bool = True,
        labels: Iterable[str] = (),
        dependencies: Sequence[Guideline | Journey] = [],
        priority: int = 0,
    ) -> Guideline:
        """Creates a guideline with the specified condition and action, as well as (optionally) tools to achieve its task."""
        guideline = await self._server._create_guideline(
            condition=condition,
            action=action,
            description=description,
            title=title,
            tools=tools,
            metadata=metadata,
            canned_responses=canned_responses,
            criticality=criticality,
            composition_mode=composition_mode,
            matcher=matcher,
            on_selected=on_selected,
            on_message=on_message,
            canned_response_field_provider=canned_response_field_provider,
            tags=[t.id for t in tags] if tags else None,
            relationship_target_tag_id=_Tag.for_journey_id(self.id).id,
            id=id,
            track=track,
            labels=labels,
            priority=priority,
        )

        if dependencies:
            await guideline.depend_on(*dependencies)

        return guideline

    async def create_observation(
        self,
        condition: str | None = None,
        description: str | None = None,
        tools: Iterable[ToolRef] = [],
        canned_responses: Sequence[CannedResponseId] = [],
        composition_mode: CompositionMode | None = None,
        matcher: Callable[[GuidelineMatchingContext, Guideline], Awaitable[GuidelineMatch]]
        | None = None,
        on_selected: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        tags: Sequence[Tag] = [],
        id: GuidelineId | None = None,
        title: str | None = None,
        labels: Iterable[str] = (),
        dependencies: Sequence[Guideline | Journey] = [],
        priority: int = 0,
    ) -> Guideline:
        """A shorthand for creating an observational guideline with the specified condition."""

        return await self.create_guideline(
            condition=condition,
            description=description,
            id=id,
            title=title,
            tools=tools,
            canned_responses=canned_responses,
            composition_mode=composition_mode,
            matcher=matcher,
            on_selected=on_selected,
            canned_response_field_provider=canned_response_field_provider,
            tags=tags,
            labels=labels,
            dependencies=dependencies,
            priority=priority,
        )

    async def attach_tool(
        self,
        tool: ToolRef,
        condition: str,
    ) -> GuidelineId:
        """Attaches a tool to the journey, to be usable by the agent under the specified condition.

        .. deprecated::
            Use ``create_guideline`` or ``create_observation`` with the ``tools`` parameter instead.
        """
        warnings.warn(
            "attach_tool() is deprecated. Use create_guideline() or create_observation() with the tools parameter instead.",
            DeprecationWarning,
            stacklevel=2,
        )

        await _enable_tool_refs(self._server._plugin_server, [tool])

        tool_id = _tool_ref_to_id(tool)

        guideline = await self._container[GuidelineStore].create_guideline(
            condition=condition,
            action=None,
        )

        self._server._add_guideline_evaluation(
            guideline.id,
            GuidelineContent(condition=condition, action=None),
            [tool_id],
        )

        await self._container[RelationshipStore].create_relationship(
            source=RelationshipEntity(
                id=guideline.id,
                kind=RelationshipEntityKind.GUIDELINE,
            ),
            target=RelationshipEntity(
                id=_Tag.for_journey_id(self.id).id,
                kind=RelationshipEntityKind.TAG_ALL,
            ),
            kind=RelationshipKind.DEPENDENCY,
        )

        await self._container[GuidelineToolAssociationStore].create_association(
            guideline_id=guideline.id,
            tool_id=tool_id,
        )

        return guideline.id

    async def attach_retriever(
        self,
        retriever: Callable[[RetrieverContext], Awaitable[RetrieverResult | None]],
        id: str | None = None,
    ) -> None:
        """Attaches a retriever that runs only when this journey is active."""

        def is_journey_active(ctx: EngineContext) -> bool:
            return self.id in [j.id for j in ctx.state.journeys]

        self._server._attach_conditional_retriever(
            retriever_id=id or f"journey-retriever-{self.id}",
            retriever=retriever,
            should_run=is_journey_active,
        )

    async def create_canned_response(
        self,
        template: str,
        tags: list[Tag] = [],
        signals: list[str] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        field_dependencies: Sequence[str] = (),
    ) -> CannedResponseId:
        """Creates a journey-scoped canned response with the specified template, tags, and signals."""

        self._server._advance_creation_progress()

        canrep = await self._container[CannedResponseStore].create_canned_response(
            value=template,
            tags=[_Tag.for_journey_id(self.id).id, *[t.id for t in tags]],
            fields=[],
            signals=signals,
            metadata=metadata,
            field_dependencies=field_dependencies,
        )

        return canrep.id

    async def prioritize_over(
        self, *targets: Guideline | Journey | Tag | AllOf
    ) -> Sequence[Relationship]:
        """Creates priority relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for prioritization.")

        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.PRIORITY,
                direction="source",
            )
            for t in targets
        ]

    async def exclude(self, *targets: Guideline | Journey | Tag | AllOf) -> Sequence[Relationship]:
        """Alias for prioritize_over. Creates priority relationships with other guidelines, journeys, or tags."""
        return await self.prioritize_over(*targets)

    async def depend_on(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates dependency relationships with other guidelines, journeys, or tags."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.DEPENDENCY,
                direction="source",
            )
            for t in targets
        ]

    async def depend_on_any(
        self, *targets: Guideline | Journey | Tag | AnyOf | AllOf
    ) -> Sequence[Relationship]:
        """Creates OR dependency relationships. At least one target must be active."""
        if not targets:
            raise SDKError("At least one target must be provided for dependency.")

        group_id = str(uuid.uuid4())
        return [
            await self._create_relationship(
                target=t,
                kind=RelationshipKind.DEPENDENCY_ANY,
                direction="source",
                group_id=group_id,
            )
            for t in targets
        ]

    async def _create_relationship(
        self,
        target: Guideline | Journey | Tag | AnyOf | AllOf,
        kind: RelationshipKind,
        direction: Literal["source", "target"],
        group_id: str | None = None,
    ) -> Relationship:
        if isinstance(target, Guideline):
            other_entity = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.GUIDELINE)
        elif isinstance(target, AnyOf):
            other_entity = RelationshipEntity(id=target.tag.id, kind=RelationshipEntityKind.TAG_ANY)
        elif isinstance(target, AllOf):
            other_entity = RelationshipEntity(id=target.tag.id, kind=RelationshipEntityKind.TAG_ALL)
        elif isinstance(target, Tag):
            other_entity = RelationshipEntity(id=target.id, kind=RelationshipEntityKind.TAG_ALL)
        else:
            # Journey
            other_entity = RelationshipEntity(
                id=_Tag.for_journey_id(target.id).id, kind=RelationshipEntityKind.TAG_ALL
            )

        self_entity = RelationshipEntity(
            id=_Tag.for_journey_id(self.id).id, kind=RelationshipEntityKind.TAG_ALL
        )

        if direction == "source":
            entity_source = self_entity
            entity_target = other_entity
        else:
            entity_source = other_entity
            entity_target = self_entity

        relationship = await self._container[RelationshipStore].create_relationship(
            source=entity_source,
            target=entity_target,
            kind=kind,
            group_id=group_id,
        )

        return Relationship(
            id=relationship.id,
            kind=relationship.kind,
            source=relationship.source.id,
            target=relationship.target.id,
        )


@dataclass(frozen=True)
class Capability:
    """A capability informs the agent about a specific functionality it can provide."""

    id: CapabilityId
    title: str
    description: str
    signals: Sequence[str]
    tags: Sequence[Tag]


@dataclass(frozen=True)
class Term:
    """A glossary term defines a specific concept in the agent's domain."""

    id: TermId
    name: str
    description: str
    synonyms: Sequence[str]
    tags: Sequence[Tag]


@dataclass(frozen=True)
class Variable:
    """A variable that can hold values for customers or customer groups."""

    id: ContextVariableId
    name: str
    description: str | None
    tool: ToolRef | None
    freshness_rules: str | None
    tags: Sequence[Tag]
    _server: Server
    _container: Container

    def __hash__(self) -> int:
        return hash(self.id)

    async def set_value_for_customer(self, customer: Customer, value: JSONSerializable) -> None:
        """Sets the value of the variable for a specific customer."""

        await self._container[ContextVariableStore].update_value(
            variable_id=self.id,
            key=customer.id,
            data=value,
        )

    async def set_value_for_tag(self, tag: TagId, value: JSONSerializable) -> None:
        """Sets the value of the variable for a specific tag (e.g., a customer group tag)."""

        await self._container[ContextVariableStore].update_value(
            variable_id=self.id,
            key=f"tag:{tag}",
            data=value,
        )

    async def set_global_value(self, value: JSONSerializable) -> None:
        """Sets the global value of the variable, which is accessible to all customers by default."""

        await self._container[ContextVariableStore].update_value(
            variable_id=self.id,
            key=ContextVariableStore.GLOBAL_KEY,
            data=value,
        )

    async def set_value_for_agent(self, agent: Agent, value: JSONSerializable) -> None:
        """Sets the value of the variable for a specific agent."""

        await self._container[ContextVariableStore].update_value(
            variable_id=self.id,
            key=_Tag.for_agent_id(agent.id).id,
            data=value,
        )

    async def get_value_for_customer(self, customer: Customer) -> JSONSerializable | None:
        """Retrieves the value of the variable for a specific customer."""

        value = await self._container[ContextVariableStore].read_value(
            variable_id=self.id,
            key=customer.id,
        )

        return value.data if value else None

    async def get_value_for_tag(self, tag: TagId) -> JSONSerializable | None:
        """Retrieves the value of the variable for a specific tag (e.g., a customer group tag)."""
        value = await self._container[ContextVariableStore].read_value(
            variable_id=self.id,
            key=f"tag:{tag}",
        )

        return value.data if value else None

    async def get_global_value(self) -> JSONSerializable | None:
        """Retrieves the global value of the variable, which is accessible to all customers by default."""

        value = await self._container[ContextVariableStore].read_value(
            variable_id=self.id,
            key=ContextVariableStore.GLOBAL_KEY,
        )

        return value.data if value else None

    async def get_value_for_agent(self, agent: Agent) -> JSONSerializable | None:
        """Retrieves the value of the variable for a specific agent."""

        value = await self._container[ContextVariableStore].read_value(
            variable_id=self.id,
            key=_Tag.for_agent_id(agent.id).id,
        )

        return value.data if value else None

    async def get_value(self) -> JSONSerializable | None:
        """Retrieves the value of the variable for the current context"""
        value = EntityContext.get_variable_value(self.id)
        return value.data if value else None


class CustomerMetadata:
    """Async-aware metadata accessor for a customer.

    Supports sync reads via ``[]`` and async writes via :meth:`set` / :meth:`delete`.
    Use :meth:`get` for an async read that refreshes from the store.
    """

    def __init__(
        self,
        customer_id: CustomerId,
        data: Mapping[str, str],
        server: Optional[Server] = None,
    ) -> None:
        self._customer_id = customer_id
        self._data = dict(data)
        self._server = server

    def _get_store(self) -> CustomerStore:
        server = self._server if self._server is not None else Server.current
        return server._container[CustomerStore]

    # -- sync reads ----------------------------------------------------------

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # -- async operations -----------------------------------------------------

    async def get(self, key: str, default: str | None = None) -> str | None:
        """Read a metadata value, refreshing from the store first."""
        customer = await self._get_store().read_customer(self._customer_id)
        self._data = dict(customer.extra)
        return self._data.get(key, default)

    def _check_not_guest(self) -> None:
        if self._customer_id == CustomerStore.GUEST_ID:
            raise RuntimeError("Cannot update the guest customer")

    async def set(self, key: str, value: str) -> None:
        """Set a metadata value and persist it to the store."""
        self._check_not_guest()
        await self._get_store().upsert_extra(self._customer_id, {key: value})
        self._data[key] = value

    async def delete(self, key: str) -> None:
        """Delete a metadata value and persist the removal to the store."""
        self._check_not_guest()
        await self._get_store().remove_extra(self._customer_id, [key])
        del self._data[key]


class Customer:
    """A customer represents an individual or entity interacting with the agent."""

    def __init__(
        self,
        id: CustomerId,
        name: str,
        metadata: Mapping[str, str],
        tags: Sequence[Tag],
        _server: Optional[Server] = None,
    ) -> None:
        self._id = id
        self._name = name
        self._metadata = CustomerMetadata(
            customer_id=id,
            data=metadata,
            server=_server,
        )
        self._tags = tags
        self._server = _server

    @property
    def id(self) -> CustomerId:
        return self._id

    @property
    def name(self) -> str:
        return self._name

    @property
    def metadata(self) -> CustomerMetadata:
        return self._metadata

    @property
    def tags(self) -> Sequence[Tag]:
        return self._tags

    @classproperty
    def guest(cls: Customer) -> Customer:
        return Customer(
            id=CustomerStore.GUEST_ID,
            name="Guest",
            metadata={},
            tags=[],
        )

    @classproperty
    def current(cls) -> Customer:
        """Get the current customer from the asyncio task context.

        Returns:
            The current customer as an SDK Customer object

        Raises:
            RuntimeError: If no customer is available in the current context
        """
        core_customer = EntityContext.get_customer()
        if core_customer is None:
            raise RuntimeError("No customer available in current context")

        return Customer(
            id=core_customer.id,
            name=core_customer.name,
            metadata=core_customer.extra,
            tags=_tags_from_ids(core_customer.tags),
        )

    async def update(
        self,
        *,
        name: str | None = None,
    ) -> None:
        """Updates the customer's information.

        Args:
            name: New name for the customer.

        Raises:
            RuntimeError: If this is the guest customer.
        """
        if self._id == CustomerStore.GUEST_ID:
            raise RuntimeError("Cannot update the guest customer")

        server = self._server if self._server is not None else Server.current
        customer_store = server._container[CustomerStore]

        if name is not None:
            await customer_store.update_customer(
                customer_id=self._id,
                params={"name": name},
            )

        updated = await customer_store.read_customer(self._id)
        self._name = updated.name
        self._tags = _tags_from_ids(updated.tags)


@dataclass(frozen=True)
class RetrieverContext:
    """Context for retriever functions, providing helpful information for data retrieval."""

    server: Server
    container: Container
    logger: Logger
    tracer: Tracer
    session: Session
    agent: Agent
    customer: Customer
    variables: Mapping[Variable, JSONSerializable]
    interaction: Interaction

    @property
    def correlator(self) -> Tracer:
        self.logger.warning(
            "`correlator` is deprecated. Please change your code to use the `tracer` property"
        )
        return self.tracer


@dataclass(frozen=True)
class RetrieverResult:
    """Result of a retriever function, containing the retrieved data and metadata, as well (optionally) as canned response information."""

    data: JSONSerializable
    metadata: Mapping[str, JSONSerializable] = field(default_factory=dict)
    canned_responses: Sequence[str] = field(default_factory=list)
    canned_response_fields: Mapping[str, Any] = field(default_factory=dict)
    guidelines: Sequence[TransientGuideline] = field(default_factory=list)


DeferredRetriever: TypeAlias = Callable[[EngineContext], Awaitable[RetrieverResult | None]]
"""A deferred retriever callable that receives a pre-response EngineContext and returns a RetrieverResult or None.

Returning this allows retrievers to start work in parallel during on_acknowledged, but defer the final decision
of what data to return (or whether to return any data at all) until on_generating_messages, when the
full EngineContext including matched guidelines and tool insights is available.
"""

RetrieverFunction: TypeAlias = Callable[
    [RetrieverContext], Awaitable[RetrieverResult | None | DeferredRetriever]
]
"""A retriever function that can either return a result directly, or return a deferred callable.

When a RetrieverResult or None is returned directly, it's used as-is.
When a DeferredRetriever is returned, it will be called later with the EngineContext to get the final result.
"""


class CompositionMode(enum.Enum):
    """Defines the composition mode for the agent, which determines how responses are generated."""

    FLUID = _CompositionMode.CANNED_FLUID
    """Responses are generated fluidly, allowing for dynamic composition of responses."""

    COMPOSITED = _CompositionMode.CANNED_COMPOSITED
    """Responses are generated in such a way as to mimic the style of the provided set of canned responses."""

    STRICT = _CompositionMode.CANNED_STRICT
    """Responses are generated strictly based on the provided canned responses, without fluidity."""

    @staticmethod
    def _to_core_composition_mode(mode: CompositionMode | None) -> _CompositionMode | None:
        if mode is None:
            return None
        return mode.value

    @staticmethod
    def _from_core_composition_mode(mode: _CompositionMode | None) -> CompositionMode | None:
        if mode is None:
            return None

        # Map core modes back to SDK modes
        if mode == _CompositionMode.CANNED_FLUID:
            return CompositionMode.FLUID
        elif mode == _CompositionMode.CANNED_COMPOSITED:
            return CompositionMode.COMPOSITED
        elif mode == _CompositionMode.CANNED_STRICT:
            return CompositionMode.STRICT
        else:
            # FLUID mode is not exposed in SDK, so return None
            return None


class ExperimentalAgentFeatures:
    def __init__(self, agent: Agent) -> None:
        self._agent = agent

    async def create_capability(
        self,
        title: str,
        description: str,
        signals: Sequence[str] | None = None,
    ) -> Capability:
        """Creates a capability with the specified title, description, and signals."""

        self._agent._server._advance_creation_progress()

        capability = await self._agent._container[CapabilityStore].create_capability(
            title=title,
            description=description,
            signals=signals,
            tags=[_Tag.for_agent_id(self._agent.id).id],
        )

        return Capability(
            id=capability.id,
            title=capability.title,
            description=capability.description,
            signals=capability.signals,
            tags=_tags_from_ids(capability.tags),
        )


@dataclass(frozen=True)
class Agent:
    """An agent represents an entity that can interact with customers, manage journeys, and perform various tasks."""

    _server: Server
    _container: Container

    id: AgentId
    name: str
    description: str | None
    max_engine_iterations: int
    composition_mode: CompositionMode
    output_mode: OutputMode
    tags: Sequence[Tag]

    retrievers: Mapping[str, RetrieverFunction] = field(default_factory=dict)

    @property
    def experimental_features(self) -> ExperimentalAgentFeatures:
        """Provides access to experimental features of the agent."""
        return ExperimentalAgentFeatures(self)

    async def create_journey(
        self,
        title: str,
        description: str,
        triggers: list[str | Guideline] | None = None,
        id: JourneyId | None = None,
        composition_mode: CompositionMode | None = None,
        on_selected: Callable[[EngineContext, JourneyMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyMatch], Awaitable[None]] | None = None,
        tags: Sequence[Tag] = [],
        labels: Iterable[str] = (),
        dependencies: Sequence[Guideline | Journey] = [],
        priority: int = 0,
        conditions: list[str | Guideline] | None = None,
    ) -> Journey:
        """Creates a new journey with the specified title, description, and triggers."""

        triggers = _resolve_journey_triggers_kwarg(triggers, conditions)

        self._server._advance_creation_progress()

        journey = await self._server.create_journey(
            title,
            description,
            triggers,
            tags=[t.id for t in tags],
            id=id,
            composition_mode=composition_mode,
            on_selected=on_selected,
            on_message=on_message,
            labels=labels,
            priority=priority,
        )

        await self.attach_journey(journey)

        for tag in tags:
            await self._container[JourneyStore].upsert_tag(
                journey.id,
                tag.id,
            )

        result = Journey(
            id=journey.id,
            title=journey.title,
            description=description,
            triggers=journey.triggers,
            tags=[*journey.tags, *tags],
            states=journey.states,
            transitions=journey.transitions,
            composition_mode=journey.composition_mode,
            labels=journey.labels,
            priority=journey.priority,
            _start_state_id=journey._start_state_id,
            _server=self._server,
            _container=self._container,
        )

        if dependencies:
            await result.depend_on(*dependencies)

        return result

    async def attach_journey(self, journey: Journey) -> None:
        """Attaches an existing journey to the agent, allowing it to be used in interactions."""

        await self._container[JourneyStore].upsert_tag(
            journey.id,
            _Tag.for_agent_id(self.id).id,
        )

    async def create_guideline(
        self,
        condition: str | None = None,
        action: str | None = None,
        description: str | None = None,
        tools: Iterable[ToolRef] = [],
        metadata: dict[str, JSONSerializable] = {},
        canned_responses: Sequence[CannedResponseId] = [],
        criticality: Criticality = Criticality.MEDIUM,
        composition_mode: CompositionMode | None = None,
        matcher: Callable[[GuidelineMatchingContext, Guideline], Awaitable[GuidelineMatch]]
        | None = None,
        on_selected: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        tags: Sequence[Tag] = [],
        id: GuidelineId | None = None,
        title: str | None = None,
        track: bool = True,
        labels: Iterable[str] = (),
        dependencies: Sequence[Guideline | Journey] = [],
        priority: int = 0,
    ) -> Guideline:
        """Creates a guideline with the specified condition and action, as well as (optionally) tools to achieve its task."""
        guideline = await self._server._create_guideline(
            condition=condition,
            action=action,
            description=description,
            title=title,
            tools=tools,
            metadata=metadata,
            canned_responses=canned_responses,
            criticality=criticality,
            composition_mode=composition_mode,
            matcher=matcher,
            on_selected=on_selected,
            on_message=on_message,
            canned_response_field_provider=canned_response_field_provider,
            tags=[_Tag.for_agent_id(self.id).id, *[t.id for t in tags]],
            relationship_target_tag_id=None,
            id=id,
            track=track,
            labels=labels,
            priority=priority,
        )

        if dependencies:
            await guideline.depend_on(*dependencies)

        return guideline

    async def create_observation(
        self,
        condition: str | None = None,
        description: str | None = None,
        tools: Iterable[ToolRef] = [],
        canned_responses: Sequence[CannedResponseId] = [],
        criticality: Criticality = Criticality.MEDIUM,
        composition_mode: CompositionMode | None = None,
        matcher: Callable[[GuidelineMatchingContext, Guideline], Awaitable[GuidelineMatch]]
        | None = None,
        on_selected: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None = None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None = None,
        tags: Sequence[Tag] = [],
        id: GuidelineId | None = None,
        title: str | None = None,
        labels: Iterable[str] = (),
        dependencies: Sequence[Guideline | Journey] = [],
        priority: int = 0,
    ) -> Guideline:
        """A shorthand for creating an observational guideline with the specified condition."""

        return await self.create_guideline(
            condition=condition,
            description=description,
            id=id,
            title=title,
            tools=tools,
            canned_responses=canned_responses,
            composition_mode=composition_mode,
            matcher=matcher,
            on_selected=on_selected,
            criticality=criticality,
            canned_response_field_provider=canned_response_field_provider,
            tags=tags,
            labels=labels,
            dependencies=dependencies,
            priority=priority,
        )

    async def attach_tool(
        self,
        tool: ToolRef,
        condition: str,
    ) -> GuidelineId:
        """Attaches a tool to the agent, to be usable under the specified condition.

        .. deprecated::
            Use ``create_guideline`` or ``create_observation`` with the ``tools`` parameter instead.
        """
        warnings.warn(
            "attach_tool() is deprecated. Use create_guideline() or create_observation() with the tools parameter instead.",
            DeprecationWarning,
            stacklevel=2,
        )

        await _enable_tool_refs(self._server._plugin_server, [tool])

        tool_id = _tool_ref_to_id(tool)

        guideline = await self._container[GuidelineStore].create_guideline(
            condition=condition,
            action=None,
        )

        self._server._add_guideline_evaluation(
            guideline.id,
            GuidelineContent(condition=condition, action=None),
            [tool_id],
        )

        await self._container[GuidelineToolAssociationStore].create_association(
            guideline_id=guideline.id,
            tool_id=tool_id,
        )

        return guideline.id

    async def create_canned_response(
        self,
        template: str,
        tags: list[Tag] = [],
        signals: list[str] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        field_dependencies: Sequence[str] = (),
    ) -> CannedResponseId:
        """Creates a canned response with the specified template, tags, and signals."""

        self._server._advance_creation_progress()

        canrep = await self._container[CannedResponseStore].create_canned_response(
            value=template,
            tags=[_Tag.for_agent_id(self.id).id, *[t.id for t in tags]],
            fields=[],
            signals=signals,
            metadata=metadata,
            field_dependencies=field_dependencies,
        )

        return canrep.id

    async def create_term(
        self,
        name: str,
        description: str,
        id: Optional[TermId] = None,
        synonyms: Sequence[str] = [],
    ) -> Term:
        """Creates a glossary term with the specified name, description, and synonyms."""

        self._server._advance_creation_progress()

        term = await self._container[GlossaryStore].create_term(
            name=name,
            description=description,
            synonyms=synonyms,
            tags=[_Tag.for_agent_id(self.id).id],
            id=id,
        )

        return Term(
            id=term.id,
            name=term.name,
            description=term.description,
            synonyms=term.synonyms,
            tags=_tags_from_ids(term.tags),
        )

    async def create_variable(
        self,
        name: str,
        description: str | None = None,
        tool: ToolRef | None = None,
        freshness_rules: str | None = None,
    ) -> Variable:
        """Creates a variable with the specified name, description, tool, and freshness rules."""

        self._server._advance_creation_progress()

        if tool:
            await _enable_tool_refs(self._server._plugin_server, [tool])

        variable = await self._container[ContextVariableStore].create_variable(
            name=name,
            description=description,
            tool_id=_tool_ref_to_id(tool) if tool else None,
            freshness_rules=freshness_rules,
            tags=[_Tag.for_agent_id(self.id).id],
        )

        return Variable(
            id=variable.id,
            name=variable.name,
            description=variable.description,
            tool=tool,
            freshness_rules=variable.freshness_rules,
            tags=_tags_from_ids(variable.tags),
            _server=self._server,
            _container=self._container,
        )

    async def list_variables(self) -> Sequence[Variable]:
        """Lists all variables associated with the agent."""

        variables = await self._container[ContextVariableStore].list_variables(
            tags=[_Tag.for_agent_id(self.id).id]
        )

        return [
            Variable(
                id=variable.id,
                name=variable.name,
                description=variable.description,
                tool=self._server._plugin_server.tools[variable.tool_id.tool_name]
                if variable.tool_id
                else None,
                freshness_rules=variable.freshness_rules,
                tags=_tags_from_ids(variable.tags),
                _server=self._server,
                _container=self._container,
            )
            for variable in variables
        ]

    async def find_variable(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
    ) -> Variable | None:
        """Finds a variable by its ID or name."""

        if not id and not name:
            raise SDKError("Either id or name must be provided to find a variable.")

        variable: ContextVariable | None = None

        if id:
            try:
                variable = await self._container[ContextVariableStore].read_variable(
                    ContextVariableId(id)
                )
            except ItemNotFoundError:
                return None
        else:
            variable = next(
                (
                    v
                    for v in await self._container[ContextVariableStore].list_variables(
                        tags=[_Tag.for_agent_id(self.id).id]
                    )
                    if v.name == name
                ),
                None,
            )

            if not variable:
                return None

        return Variable(
            id=variable.id,
            name=variable.name,
            description=variable.description,
            tool=self._server._plugin_server.tools[variable.tool_id.tool_name]
            if variable.tool_id
            else None,
            freshness_rules=variable.freshness_rules,
            tags=_tags_from_ids(variable.tags),
            _server=self._server,
            _container=self._container,
        )

    async def get_variable(
        self,
        *,
        id: ContextVariableId | str | None = None,
        name: str | None = None,
    ) -> Variable:
        """Retrieves a variable by its ID or name, raising an error if not found."""

        if variable := await self.find_variable(id=id, name=name):
            return variable
        raise SDKError(f"Variable with id {id} or name {name} not  found.")

    async def attach_retriever(
        self,
        retriever: RetrieverFunction,
        id: str | None = None,
    ) -> None:
        """Attaches a retriever function to the agent, allowing it to be used in interactions."""

        if not id:
            id = f"retriever-{len(self.retrievers) + 1}"

        cast(
            dict[str, RetrieverFunction],
            self.retrievers,
        )[id] = retriever

        self._server._retrievers[self.id][id] = retriever

    async def utter(
        self,
        session: Session,
        *,
        guidelines: Sequence[TransientGuideline],
    ) -> str:
        """Generate an agent message in the given session following the provided transient guidelines.

        Args:
            session: The session in which to generate the message.
            guidelines: Transient guidelines (action + optional fields) the agent should follow.

        Returns:
            The generated message text.
        """
        app = self._container[_Application]
        requests = [
            _UtteranceRequest(
                action=g["action"],
                rationale=_UtteranceRationale.UNSPECIFIED,
            )
            for g in guidelines
        ]
        event = await app.sessions.utter(session.id, requests)
        return cast(str, cast(dict[str, Any], event.data)["message"])

    @classproperty
    def current(cls) -> Agent:
        """Get the current agent from the asyncio task context.

        Returns:
            The current agent as an SDK Agent object

        Raises:
            RuntimeError: If no agent is available in the current context
        """
        core_agent = EntityContext.get_agent()
        if core_agent is None:
            raise RuntimeError("No agent available in current context")

        # Get the current server and construct the Agent with the necessary references
        server = Server.current

        # Map core composition mode to SDK composition mode
        composition_mode_map = {
            _CompositionMode.FLUID: CompositionMode.FLUID,
            _CompositionMode.CANNED_FLUID: CompositionMode.FLUID,
            _CompositionMode.CANNED_COMPOSITED: CompositionMode.COMPOSITED,
            _CompositionMode.CANNED_STRICT: CompositionMode.STRICT,
        }

        return Agent(
            _server=server,
            _container=server._container,
            id=core_agent.id,
            name=core_agent.name,
            description=core_agent.description,
            max_engine_iterations=core_agent.max_engine_iterations,
            composition_mode=composition_mode_map[core_agent.composition_mode],
            output_mode=core_agent.message_output_mode or OutputMode.BLOCK,
            tags=_tags_from_ids(core_agent.tags),
        )


class SessionMetadata:
    """Async-aware metadata accessor for a session.

    Supports sync reads via ``[]`` and async writes via :meth:`set` / :meth:`delete`.
    Use :meth:`get` for an async read that refreshes from the store.
    """

    def __init__(
        self,
        session_id: SessionId,
        data: Mapping[str, JSONSerializable],
        server: Optional[Server] = None,
    ) -> None:
        self._session_id = session_id
        self._data = dict(data)
        self._server = server

    def _get_store(self) -> SessionStore:
        server = self._server if self._server is not None else Server.current
        return server._container[SessionStore]

    # -- sync reads ----------------------------------------------------------

    def __getitem__(self, key: str) -> JSONSerializable:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # -- async operations -----------------------------------------------------

    async def get(self, key: str, default: JSONSerializable = None) -> JSONSerializable:
        """Read a metadata value, refreshing from the store first."""
        session = await self._get_store().read_session(self._session_id)
        self._data = dict(session.metadata)
        return self._data.get(key, default)

    async def set(self, key: str, value: JSONSerializable) -> None:
        """Set a metadata value and persist it to the store."""
        await self._get_store().set_metadata(self._session_id, key, value)
        self._data[key] = value

    async def delete(self, key: str) -> None:
        """Delete a metadata value and persist the removal to the store."""
        await self._get_store().unset_metadata(self._session_id, key)
        del self._data[key]


class SessionLabels:
    """Async-aware labels accessor for a session.

    Supports sync reads via ``in`` and ``len`` and async writes via :meth:`add` / :meth:`remove`.
    """

    def __init__(
        self,
        session_id: SessionId,
        data: Set[str],
        server: Optional[Server] = None,
    ) -> None:
        self._session_id = session_id
        self._data = set(data)
        self._server = server

    def _get_store(self) -> SessionStore:
        server = self._server if self._server is not None else Server.current
        return server._container[SessionStore]

    # -- sync reads ----------------------------------------------------------

    def __contains__(self, label: object) -> bool:
        return label in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    # -- async operations -----------------------------------------------------

    async def add(self, label: str) -> None:
        """Add a label and persist it to the store."""
        await self._get_store().upsert_labels(self._session_id, {label})
        self._data.add(label)

    async def remove(self, label: str) -> None:
        """Remove a label and persist the removal to the store."""
        await self._get_store().remove_labels(self._session_id, {label})
        self._data.discard(label)


class Session:
    """A session represents an ongoing conversation between a customer and an agent."""

    def __init__(
        self,
        id: SessionId,
        interaction: Interaction,
        metadata: Mapping[str, JSONSerializable],
        labels: Set[str],
        customer: Customer,
        agent: Agent,
        mode: SessionMode,
        title: str | None = None,
        _server: Optional[Server] = None,
    ) -> None:
        self._id = id
        self._interaction = interaction
        self._metadata = SessionMetadata(
            session_id=id,
            data=metadata,
            server=_server,
        )
        self._labels = SessionLabels(
            session_id=id,
            data=labels,
            server=_server,
        )
        self._customer = customer
        self._agent = agent
        self._mode = mode
        self._title = title
        self._server = _server

    @property
    def id(self) -> SessionId:
        return self._id

    @property
    def interaction(self) -> Interaction:
        return self._interaction

    @property
    def metadata(self) -> SessionMetadata:
        return self._metadata

    @property
    def labels(self) -> SessionLabels:
        return self._labels

    @property
    def customer(self) -> Customer:
        """The customer associated with this session."""
        return self._customer

    @property
    def agent(self) -> Agent:
        """The agent associated with this session."""
        return self._agent

    @property
    def mode(self) -> SessionMode:
        return self._mode

    @property
    def title(self) -> str | None:
        return self._title

    @classproperty
    def current(cls) -> Session:
        """Get the current session from the asyncio task context.

        Returns:
            The current session as an SDK Session object

        Raises:
            RuntimeError: If no session is available in the current context
        """
        core_session = EntityContext.get_session()

        if core_session is None:
            raise RuntimeError("No session available in current context")

        interaction = EntityContext.get_interaction()

        if interaction is None:
            raise RuntimeError("No interaction available in current context")

        return Session(
            id=core_session.id,
            interaction=interaction,
            metadata=core_session.metadata,
            labels=core_session.labels,
            customer=Customer.current,
            agent=Agent.current,
            mode=core_session.mode,
            title=core_session.title,
        )

    async def update(
        self,
        *,
        customer: Customer | None = None,
        agent: Agent | None = None,
        mode: SessionMode | None = None,
        title: str | None = None,
    ) -> None:
        """Updates the session's information.

        Args:
            customer: New customer for the session.
            agent: New agent for the session.
            mode: New session mode ("auto" or "manual").
            title: New title for the session.
        """
        server = self._server if self._server is not None else Server.current
        session_store = server._container[SessionStore]

        params: _SessionUpdateParams = {}
        if customer is not None:
            params["customer_id"] = customer.id
        if agent is not None:
            params["agent_id"] = agent.id
        if mode is not None:
            params["mode"] = mode
        if title is not None:
            params["title"] = title

        if params:
            await session_store.update_session(
                session_id=self._id,
                params=params,
            )

        updated = await session_store.read_session(self._id)
        self._mode = updated.mode
        self._title = updated.title
        if customer is not None:
            self._customer = customer
        if agent is not None:
            self._agent = agent


class ToolContextAccessor:
    """A context accessor for tools, providing access to the server and other relevant data."""

    def __init__(self, context: ToolContext) -> None:
        self.context = context

    @property
    def server(self) -> Server:
        """Returns the server associated with the tool context."""
        return cast(Server, self.context.plugin_data["server"])

    @property
    def current_interaction(self) -> Interaction:
        """Returns the engine context associated with the tool context."""
        interaction = EntityContext.get_interaction()

        if interaction is None:
            raise RuntimeError("No interaction available in current context")

        return interaction

    @property
    def logger(self) -> Logger:
        """Returns the logger associated with the context."""
        return self.server._container[Logger]


def _die(message: str, exc: Exception | None) -> NoReturn:
    if exc:
        import traceback

        traceback.print_exception(exc)
    rich.print(Text(message, style="bold red"), file=sys.stderr)
    sys.exit(1)


def _die_nlp_config_error(error: NLPServiceConfigurationError) -> NoReturn:
    console = Console(stderr=True)

    header = Text()
    header.append("🔧 ", style="bold")
    header.append("NLP SERVICE CONFIGURATION ERROR", style="bold white")

    content = Text(str(error), style="white")

    panel = Panel(
        content,
        title=header,
        title_align="left",
        border_style="white",
        box=rich.box.DOUBLE_EDGE,
        padding=(1, 3),
        width=100,
    )

    console.print()
    console.print(panel)
    console.print()
    sys.exit(1)


class Server:
    """The main server class that manages the agent, journeys, tools, and other components.

    This class is responsible for initializing the server, managing the lifecycle of the agent, and providing access to various services and components.

    Args:
        host: The NIC host to which the server will bind.
        port: The port on which the server will run.
        tool_service_port: The port for the integrated tool service.
        nlp_service: A factory function to create an NLP service instance. See `NLPServiceFactories` for available options.
        session_store: The session store to use for managing sessions.
        customer_store: The customer store to use for managing customers.
        log_level: The logging level for the server.
        modules: A list of module names to load for the server.
        migrate: Whether to allow database migrations on startup (if needed).
        configure_hooks: A callable to configure engine hooks.
        configure_container: A callable to configure the dependency injection container.
        initialize_container: A callable to perform additional initialization after the container is set up.
    """

    _current_server_var = contextvars.ContextVar[Optional["Server"]](
        "parlant_current_server", default=None
    )

    def __init__(
        self,
        *,
        host: str = "0.0.0.0",
        port: int = 8800,
        tool_service_port: int = 8818,
        nlp_service: Callable[[Container], NLPService] = NLPServices.emcie,
        session_store: Literal["transient", "local"] | str | SessionStore = "transient",
        customer_store: Literal["transient", "local"] | str | CustomerStore = "transient",
        variable_store: Literal["transient", "local"] | str | ContextVariableStore = "transient",
        log_level: LogLevel = LogLevel.INFO,
        modules: list[str] = [],
        migrate: bool = False,
        configure_hooks: Callable[[EngineHooks], Awaitable[EngineHooks]] | None = None,
        configure_container: Callable[[Container], Awaitable[Container]] | None = None,
        initialize_container: Callable[[Container], Awaitable[None]] | None = None,
        configure_api: Callable[[FastAPI], Awaitable[None]] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.tool_service_port = tool_service_port
        self.log_level = log_level
        self.modules = modules

        self._migrate = migrate
        self._nlp_service_func = nlp_service
        self._evaluator: _CachedEvaluator

        self._session_store = session_store
        self._customer_store = customer_store
        self._context_variable_store = variable_store

        self._configure_hooks = configure_hooks
        self._configure_container = configure_container
        self._initialize = initialize_container
        self._configure_api = configure_api
        self._retrievers: dict[
            AgentId,
            dict[str, RetrieverFunction],
        ] = defaultdict(dict)
        self._exit_stack = AsyncExitStack()

        self._finished_setup = False
        self._ready_event = asyncio.Event()

        self._plugin_server: PluginServer
        self._container: Container

        self._guideline_evaluations: dict[
            GuidelineId,
            tuple[Any, Callable[..., Coroutine[Any, Any, _CachedEvaluator.GuidelineEvaluation]]],
        ] = {}

        self._journey_evaluations: dict[
            JourneyId,
            tuple[Any, Callable[..., Coroutine[Any, Any, _CachedEvaluator.JourneyEvaluation]]],
        ] = {}

        self._creation_progress: Progress | None = Progress(
            TextColumn("{task.description}"),
            BarColumn(pulse_style="bold green"),
            TimeElapsedColumn(),
        )
        self._creation_progress_k = 0
        self._creation_progress_task_id: TaskID

    @property
    def container(self) -> Container:
        """Returns the dependency injection container."""
        return self._container

    @property
    def logger(self) -> Logger:
        """Returns the logger instance from the container."""
        return self._container[Logger]

    @property
    def ready(self) -> asyncio.Event:
        """An asyncio event that is set when the server is ready to accept requests."""
        return self._ready_event

    @property
    def api(self) -> FastAPI:
        """Returns the FastAPI application instance.

        Raises:
            RuntimeError: If the server API is not yet initialized.
        """
        if not self._finished_setup:
            raise RuntimeError("Server API is not yet initialized. Wait for the server to start.")

        return self._container[FastAPI]

    def _advance_creation_progress(self) -> None:
        if self._creation_progress is None:
            return

        self._creation_progress_k += 1

        self._creation_progress.update(
            self._creation_progress_task_id,
            description=f"Caching entity embeddings ({self._creation_progress_k})",
        )

    async def __aenter__(self) -> Server:
        # Set this server instance as the current server in the context
        self._current_server_var.set(self)

        try:
            self._startup_context_manager = start_parlant(self._get_startup_params())
            self._container = await self._startup_context_manager.__aenter__()

            assert self._creation_progress
            self._creation_progress = self._creation_progress.__enter__()
            self._creation_progress_task_id = self._creation_progress.add_task(
                "Caching entity embeddings", total=None
            )

            return self

        except NLPServiceConfigurationError as e:
            _die_nlp_config_error(e)
        except SDKError as e:
            _die(str(e), e)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        self._finished_setup = True

        assert self._creation_progress
        self._creation_progress.__exit__(None, None, None)
        self._creation_progress = None

        if exc_value is not None:
            await self._startup_context_manager.__aexit__(exc_type, exc_value, tb)
            await self._exit_stack.aclose()
            return False

        with self._container[Tracer].span(
            "startup.evaluations",
            attributes={"scope": "Evaluations"},
        ):
            await self._process_evaluations()

        with self._container[Tracer].span(
            "startup.indexing",
            attributes={"scope": "Indexing"},
        ):
            await self._process_indexing()

        await self._setup_retrievers()

        # Start health check polling to set ready event when the server is ready to receive requests
        health_check_task = asyncio.create_task(self._poll_health_endpoint())

        try:
            # This actually starts the server
            await self._startup_context_manager.__aexit__(None, None, None)
        except BaseException:
            health_check_task.cancel()
            raise
        finally:
            # Wait for health check to complete before cleanup
            await health_check_task
            await self._exit_stack.aclose()

        return False

    # Start background task to poll health endpoint and set ready event
    async def _poll_health_endpoint(self) -> None:
        url = f"http://{self.host if self.host not in ['0.0.0.0', '127.0.0.1'] else 'localhost'}:{self.port}/healthz"

        async with httpx.AsyncClient() as client:
            while True:
                try:
                    response = await client.get(url, timeout=30.0)

                    if response.status_code != 200:
                        self._container[Logger].critical("Health check failed.")
                        sys.exit(1)

                    self._ready_event.set()
                    self._container[Logger].info("Server is ready to accept requests.")
                    return
                except (httpx.RequestError, httpx.TimeoutException):
                    await asyncio.sleep(1)

    def _add_guideline_evaluation(
        self,
        guideline_id: GuidelineId,
        guideline_content: GuidelineContent,
        tool_ids: Sequence[ToolId],
    ) -> None:
        self._guideline_evaluations[guideline_id] = (
            (guideline_id, guideline_content, tool_ids),
            self._evaluator.evaluate_guideline,
        )

    def _add_journey_evaluation(
        self,
        journey: Journey,
    ) -> None:
        self._journey_evaluations[journey.id] = ((journey,), self._evaluator.evaluate_journey)

    @staticmethod
    async def _create_guideline_handler_shim(
        user_callback: Callable[[EngineContext, GuidelineMatch], Awaitable[None]],
        guideline_id: GuidelineId,
        core_ctx: EngineContext,
        core_match: _GuidelineMatch,
    ) -> None:
        """Generic shim that translates core types to SDK GuidelineMatch and calls user callback."""
        sdk_match = GuidelineMatch(
            id=guideline_id,
            matched=True,
            rationale=core_match.rationale,
        )
        await user_callback(core_ctx, sdk_match)

    @staticmethod
    async def _create_field_provider_shim(
        provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]],
        core_ctx: EngineContext,
        core_match: _GuidelineMatch,
    ) -> None:
        """Shim that calls a field provider and updates the context with the returned fields."""
        fields = await provider(core_ctx)
        core_ctx.state.additional_canned_response_fields.update(fields)

    async def _create_guideline(
        self,
        condition: str | None,
        action: str | None,
        description: str | None,
        title: str | None,
        tools: Iterable[ToolRef],
        metadata: dict[str, JSONSerializable],
        criticality: Criticality,
        composition_mode: CompositionMode | None,
        canned_responses: Sequence[CannedResponseId],
        matcher: Callable[[GuidelineMatchingContext, Guideline], Awaitable[GuidelineMatch]] | None,
        on_selected: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None,
        on_message: Callable[[EngineContext, GuidelineMatch], Awaitable[None]] | None,
        canned_response_field_provider: Callable[[EngineContext], Awaitable[Mapping[str, Any]]]
        | None,
        tags: Sequence[TagId] | None,
        relationship_target_tag_id: TagId | None,
        id: GuidelineId | None = None,
        track: bool = True,
        labels: Iterable[str] = (),
        priority: int = 0,
    ) -> Guideline:
        """Internal method to create a guideline with common logic."""
        if condition is None and matcher is None and action is None:
            raise SDKError(
                "Either condition, matcher, or action must be specified to create a guideline."
            )

        self._advance_creation_progress()

        tools_list = list(tools)
        tool_ids = [_tool_ref_to_id(t) for t in tools_list]

        await _enable_tool_refs(self._plugin_server, tools_list)

        guideline = await self.container[GuidelineStore].create_guideline(
            condition=condition or "",
            action=action,
            description=description,
            title=title,
            criticality=criticality,
            metadata=metadata,
            composition_mode=CompositionMode._to_core_composition_mode(composition_mode),
            id=id,
            tags=tags,
            track=track,
            labels=set(labels) if labels else None,
            priority=priority,
        )

        if canned_responses:
            tag_id = _Tag.for_guideline_id(guideline.id).id

            for canrep_id in canned_responses:
                await self.container[CannedResponseStore].upsert_tag(
                    canned_response_id=canrep_id,
                    tag_id=tag_id,
                )

        # Evaluate what matcher to use if custom matcher isn't specified
        if matcher is None:
            self._add_guideline_evaluation(
                guideline.id,
                GuidelineContent(condition=condition or "", action=action),
                tool_ids,
            )

        # Create relationship if target tag specified
        if relationship_target_tag_id is not None:
            await self.container[RelationshipStore].create_relationship(
                source=RelationshipEntity(
                    id=guideline.id,
                    kind=RelationshipEntityKind.GUIDELINE,
                ),
                target=RelationshipEntity(
                    id=relationship_target_tag_id,
                    kind=RelationshipEntityKind.TAG_ALL,
                ),
                kind=RelationshipKind.DEPENDENCY,
            )

        for t in tools_list:
            await self.container[GuidelineToolAssociationStore].create_association(
                guideline_id=guideline.id,
                tool_id=_tool_ref_to_id(t),
            )

        result_guideline = Guideline(
            id=guideline.id,
            condition=condition or "",
            action=action,
            tags=_tags_from_ids(guideline.tags),
            metadata=guideline.metadata,
            labels=guideline.labels,
            priority=guideline.priority,
            _server=self,
            _container=self.container,
        )

        if matcher is not None:
            # Create a shim that translates between SDK and core types
            async def shim_matcher(
                core_ctx: _GuidelineMatchingContext, core_guideline: _Guideline
            ) -> _GuidelineMatch:
                sdk_ctx = await GuidelineMatchingContext._from_core(
                    core_ctx=core_ctx,
                    server=self,
                    container=self.container,
                )
                result = await matcher(sdk_ctx, result_guideline)

                return _GuidelineMatch(
                    guideline=core_guideline,
                    score=10 if result.matched else 1,
                    rationale=result.rationale,
                )

            strategy = CustomGuidelineMatchingStrategy(
                guideline=guideline,
                matcher=shim_matcher,
                logger=self.container[Logger],
            )

            self.container[GenericGuidelineMatchingStrategyResolver].guideline_overrides[
                guideline.id
            ] = strategy

        if (
            on_selected is not None
            or on_message is not None
            or canned_response_field_provider is not None
        ):
            engine_hooks = self.container[EngineHooks]

            if on_selected is not None:
                shim = partial(
                    Server._create_guideline_handler_shim,
                    on_selected,
                    guideline.id,
                )
                engine_hooks.on_guideline_selected_handlers[guideline.id].append(shim)

            if on_message is not None:
                shim = partial(
                    Server._create_guideline_handler_shim,
                    on_message,
                    guideline.id,
                )
                engine_hooks.on_guideline_message_handlers[guideline.id].append(shim)

            if canned_response_field_provider is not None:
                shim = partial(
                    Server._create_field_provider_shim,
                    canned_response_field_provider,
                )
                engine_hooks.on_guideline_selected_handlers[guideline.id].append(shim)

        return result_guideline

    async def _render_guideline(self, guideline_id: GuidelineId) -> str:
        guideline = await self._container[GuidelineStore].read_guideline(guideline_id)

        return f"When {guideline.content.condition}" + (
            f", then {guideline.content.action}" if guideline.content.action else ""
        )

    async def _render_journey(self, journey_id: JourneyId) -> str:
        journey = await self._container[JourneyStore].read_journey(journey_id)

        return f"Journey: {journey.title}"

    def _attach_conditional_retriever(
        self,
        retriever_id: str,
        retriever: Callable[[RetrieverContext], Awaitable[RetrieverResult | None]],
        should_run: Callable[[EngineContext], bool],
    ) -> None:
        """Register a retriever that fires only when the condition is met.

        Args:
            retriever_id: Unique identifier for this retriever.
            retriever: The retriever function to call.
            should_run: A function that takes EngineContext and returns True if the retriever should run.
        """

        async def on_generating_messages(
            ctx: EngineContext,
            payload: Any,
            exc: Optional[Exception],
        ) -> EngineHookResult:
            if not should_run(ctx):
                return EngineHookResult.CALL_NEXT

            # Build RetrieverContext
            agent = await self.get_agent(id=ctx.agent.id)
            customer = await self.get_customer(id=ctx.customer.id)

            retriever_context = RetrieverContext(
                server=self,
                container=self._container,
                logger=self._container[Logger],
                tracer=ctx.tracer,
                session=Session(
                    id=ctx.session.id,
                    interaction=ctx.interaction,
                    metadata=ctx.session.metadata,
                    labels=ctx.session.labels,
                    customer=customer,
                    agent=agent,
                    mode=ctx.session.mode,
                    title=ctx.session.title,
                ),
                agent=agent,
                customer=customer,
                variables={
                    await agent.get_variable(id=var.id): val.data
                    for var, val in ctx.state.context_variables
                },
                interaction=ctx.interaction,
            )

            # Call retriever
            result = await retriever(retriever_context)

            if result is None:
                return EngineHookResult.CALL_NEXT

            if not (
                result.data
                or result.metadata
                or result.canned_responses
                or result.canned_response_fields
            ):
                # No need to emit tool event if nothing was retrieved.
                return EngineHookResult.CALL_NEXT

            # Build the tool result
            tool_result = _SessionToolResult(
                data=result.data,
                metadata=result.metadata,
                control={"lifespan": "response"},
                canned_responses=[u for u in result.canned_responses],
                canned_response_fields=result.canned_response_fields,
            )

            if result.guidelines:
                tool_result["guidelines"] = list(result.guidelines)

            # Emit tool event with retriever data
            ctx.state.tool_events.append(
                await ctx.response_event_emitter.emit_tool_event(
                    ctx.tracer.trace_id,
                    ToolEventData(
                        tool_calls=[
                            _SessionToolCall(
                                tool_id=ToolId(
                                    service_name=INTEGRATED_TOOL_SERVICE_NAME,
                                    tool_name=retriever_id,
                                ).to_string(),
                                arguments={},
                                result=tool_result,
                            )
                        ]
                    ),
                )
            )

            return EngineHookResult.CALL_NEXT

        self._container[EngineHooks].on_generating_messages.append(on_generating_messages)

    async def _process_evaluations(self) -> None:
        _render_functions: dict[
            Literal["guideline", "journey"],
            Callable[[GuidelineId | JourneyId], Awaitable[str]],
        ] = {
            "guideline": self._render_guideline,  # type: ignore
            "journey": self._render_journey,  # type: ignore
        }

        def create_evaluation_task(
            evaluation: Coroutine[
                Any, Any, _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation
            ],
            entity_type: Literal["guideline", "journey"],
            entity_id: GuidelineId | JourneyId,
        ) -> asyncio.Task[
            tuple[
                Literal["guideline", "journey"],
                GuidelineId | JourneyId,
                _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation,
            ]
        ]:
            async def task_wrapper() -> tuple[
                Literal["guideline", "journey"],
                GuidelineId | JourneyId,
                _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation,
            ]:
                result = await evaluation
                return (entity_type, entity_id, result)

            return asyncio.create_task(task_wrapper(), name=f"{entity_type}_evaluation_{entity_id}")

        tasks: list[
            asyncio.Task[
                tuple[
                    Literal["guideline", "journey"],
                    GuidelineId | JourneyId,
                    _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation,
                ]
            ]
        ] = []

        for guideline_id, (args, func) in self._guideline_evaluations.items():
            tasks.append((create_evaluation_task(func(*args), "guideline", guideline_id)))

        for journey_id, (args, journey_func) in self._journey_evaluations.items():
            tasks.append((create_evaluation_task(journey_func(*args), "journey", journey_id)))

        if not tasks:
            return

        if self.log_level == LogLevel.TRACE:
            evaluation_results = await async_utils.safe_gather(*tasks)
        else:
            max_visible = 5

            overall_progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                TaskProgressColumn(style="bold blue"),
                TimeElapsedColumn(),
            )

            entity_progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                TaskProgressColumn(style="bold blue"),
                TimeElapsedColumn(),
                transient=True,
            )

            with Live(Group(overall_progress, entity_progress), refresh_per_second=10):
                bar_id: dict[str, int] = {}

                for t in tasks:
                    entity_id = cast(GuidelineId | JourneyId, t.get_name().split("_")[-1])
                    entity_type = t.get_name().split("_")[0]
                    description = await _render_functions[
                        cast(Literal["guideline", "journey"], entity_type)
                    ](entity_id)

                    bar_id[entity_id] = entity_progress.add_task(
                        description[:50],
                        total=100,
                    )

                overall = overall_progress.add_task("Evaluating entities", total=100)

                gather = asyncio.create_task(async_utils.safe_gather(*tasks))

                while not gather.done():
                    unfinished: list[tuple[str, float]] = []

                    for _id, rich_id in bar_id.items():
                        pct = self._evaluator._progress_for(_id)
                        entity_progress.update(TaskID(rich_id), completed=pct)

                        if pct < 100.0:
                            unfinished.append((_id, pct))

                    if unfinished:
                        show = {
                            e_id for e_id, _ in sorted(unfinished, key=lambda x: x[1])[:max_visible]
                        }
                    else:
                        show = set()

                    for e_id, rich_id in bar_id.items():
                        entity_progress.update(TaskID(rich_id), visible=(e_id in show))

                    overall_pct = sum(self._evaluator._progress_for(e_id) for e_id in bar_id) / len(
                        bar_id
                    )
                    overall_progress.update(overall, completed=overall_pct)

                    await asyncio.sleep(0.2)

                for e_id, rich_id in bar_id.items():
                    entity_progress.remove_task(
                        TaskID(rich_id),
                    )

                entity_progress.refresh()
                overall_progress.update(overall, completed=100)
                evaluation_results = await gather

        total_results = len(evaluation_results)

        if self.log_level == LogLevel.TRACE or total_results == 0:
            await self._apply_evaluation_results(evaluation_results)
        else:
            applying_progress = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                TaskProgressColumn(style="bold blue"),
                TimeElapsedColumn(),
            )

            with applying_progress:
                bar = applying_progress.add_task("Applying evaluations", total=total_results)

                # For UX: Stretch the bar to ~1s total so it's visible even when
                # processing is fast; pure no-op once natural work exceeds it.
                per_item_budget = 1.0 / total_results

                for i, (entity_type, entity_id, result) in enumerate(evaluation_results):
                    item_started = asyncio.get_running_loop().time()
                    await self._apply_single_evaluation(entity_type, entity_id, result)
                    item_ended = asyncio.get_running_loop().time()

                    applying_progress.update(bar, completed=i + 1)

                    # If processing was very fast, wait a bit to meet the allotted budget
                    if (remaining := per_item_budget - (item_ended - item_started)) > 0:
                        await asyncio.sleep(remaining)

    async def _process_indexing(self) -> None:
        indexer = self._container[Indexer]

        if self.log_level == LogLevel.TRACE:
            await indexer.run()
            return

        indexing_progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            TaskProgressColumn(style="bold blue"),
            TimeElapsedColumn(),
        )

        with indexing_progress:
            bar = indexing_progress.add_task("Indexing entities", total=100)

            async def callback(pct: float) -> None:
                indexing_progress.update(bar, completed=pct)

            await indexer.run(progress_callback=callback)
            indexing_progress.update(bar, completed=100)

        print()

    async def _apply_evaluation_results(
        self,
        evaluation_results: Sequence[
            tuple[
                Literal["guideline", "journey"],
                GuidelineId | JourneyId,
                _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation,
            ]
        ],
    ) -> None:
        for entity_type, entity_id, result in evaluation_results:
            await self._apply_single_evaluation(entity_type, entity_id, result)

    async def _apply_single_evaluation(
        self,
        entity_type: Literal["guideline", "journey"],
        entity_id: GuidelineId | JourneyId,
        result: _CachedEvaluator.GuidelineEvaluation | _CachedEvaluator.JourneyEvaluation,
    ) -> None:
        if entity_type == "guideline":
            guideline = await self._container[GuidelineStore].read_guideline(
                guideline_id=cast(GuidelineId, entity_id)
            )

            properties = cast(_CachedEvaluator.GuidelineEvaluation, result).properties

            properties_to_add = {k: v for k, v in properties.items() if k not in guideline.metadata}

            for key, value in properties_to_add.items():
                await self._container[GuidelineStore].set_metadata(
                    guideline_id=cast(GuidelineId, entity_id),
                    key=key,
                    value=value,
                )

        elif entity_type == "journey":
            for node_id, properties in cast(
                _CachedEvaluator.JourneyEvaluation, result
            ).node_properties.items():
                if node_id == END_JOURNEY.id:
                    continue

                node = await self._container[JourneyStore].read_node(node_id)
                properties_to_add = {
                    k: v
                    for k, v in properties.items()
                    if k not in node.metadata or node.metadata[k] is None
                }

                journey_node_properties = {
                    **(
                        cast(dict[str, JSONSerializable], properties.get("journey_node", {}))
                        if properties
                        else {}
                    ),
                    **cast(dict[str, JSONSerializable], node.metadata.get("journey_node", {})),
                }
                if journey_node_properties:
                    properties_to_add["journey_node"] = journey_node_properties

                for key, value in properties_to_add.items():
                    await self._container[JourneyStore].set_node_metadata(
                        node_id=node_id,
                        key=key,
                        value=value,
                    )

    async def _setup_retrievers(self) -> None:
        async def setup_retriever(
            c: Container,
            agent_id: AgentId,
            retriever_id: str,
            retriever: RetrieverFunction,
        ) -> None:
            tasks_for_this_retriever: dict[
                str,
                tuple[Timeout, asyncio.Task[RetrieverResult | None | DeferredRetriever]],
            ] = {}

            async def on_message_acknowledged(
                ctx: EngineContext,
                payload: Any,
                exc: Optional[Exception],
            ) -> EngineHookResult:
                # First do some garbage collection if needed.
                # This might be needed if tasks were not awaited
                # because of exceptions during engine processing.
                for trace_id in list(tasks_for_this_retriever.keys()):
                    if tasks_for_this_retriever[trace_id][0].expired():
                        # Very, very little change that this task is still meant to be running,
                        # or that anyone is still waiting for it. It's 99.999% garbage.
                        try:
                            tasks_for_this_retriever[trace_id][1].add_done_callback(
                                default_done_callback()
                            )
                            tasks_for_this_retriever[trace_id][1].cancel()
                            del tasks_for_this_retriever[trace_id]
                        except BaseException:
                            # If anything went unexpectedly here, whatever. Carry on.
                            pass

                agent = await self.get_agent(id=ctx.agent.id)
                customer = await self.get_customer(id=ctx.customer.id)

                coroutine = retriever(
                    RetrieverContext(
                        server=self,
                        container=self._container,
                        logger=self._container[Logger],
                        tracer=self._container[Tracer],
                        session=Session(
                            id=ctx.session.id,
                            interaction=ctx.interaction,
                            metadata=ctx.session.metadata,
                            labels=ctx.session.labels,
                            customer=customer,
                            agent=agent,
                            mode=ctx.session.mode,
                            title=ctx.session.title,
                        ),
                        agent=agent,
                        customer=customer,
                        variables={
                            await agent.get_variable(id=var.id): val.data
                            for var, val in ctx.state.context_variables
                        },
                        interaction=ctx.interaction,
                    )
                )

                c[Logger].trace(
                    f"Starting retriever {retriever_id} for agent {agent_id} with trace {ctx.tracer.trace_id}"
                )

                tasks_for_this_retriever[ctx.tracer.trace_id] = (
                    Timeout(600),  # Expiration timeout for garbage collection purposes
                    asyncio.create_task(
                        cast(
                            Coroutine[Any, Any, RetrieverResult | None | DeferredRetriever],
                            coroutine,
                        ),
                        name=f"Retriever {retriever_id} for agent {agent_id}",
                    ),
                )

                return EngineHookResult.CALL_NEXT

            async def on_generating_messages(
                ctx: EngineContext,
                payload: Any,
                exc: Optional[Exception],
            ) -> EngineHookResult:
                if timeout_and_task := tasks_for_this_retriever.pop(ctx.tracer.trace_id, None):
                    _, task = timeout_and_task
                    task_result = await task

                    # Check if the result is a deferred callable
                    if callable(task_result):
                        # Call the deferred callable with the EngineContext
                        final_result = await task_result(ctx)
                        if final_result is None:
                            # Deferred callable decided not to return data
                            return EngineHookResult.CALL_NEXT
                        task_result = final_result

                    # Handle None result
                    if task_result is None:
                        return EngineHookResult.CALL_NEXT

                    # task_result must be a RetrieverResult at this point
                    retriever_result = task_result

                    if not (
                        retriever_result.data
                        or retriever_result.metadata
                        or retriever_result.canned_responses
                        or retriever_result.canned_response_fields
                        or retriever_result.guidelines
                    ):
                        # No need to emit tool event if nothing was retrieved.
                        return EngineHookResult.CALL_NEXT

                    # Build the tool result
                    tool_result = _SessionToolResult(
                        data=retriever_result.data,
                        metadata=retriever_result.metadata,
                        control={"lifespan": "response"},
                        canned_responses=[u for u in retriever_result.canned_responses],
                        canned_response_fields=retriever_result.canned_response_fields,
                    )

                    if retriever_result.guidelines:
                        tool_result["guidelines"] = list(retriever_result.guidelines)

                    ctx.state.tool_events.append(
                        await ctx.response_event_emitter.emit_tool_event(
                            ctx.tracer.trace_id,
                            ToolEventData(
                                tool_calls=[
                                    _SessionToolCall(
                                        tool_id=ToolId(
                                            service_name=INTEGRATED_TOOL_SERVICE_NAME,
                                            tool_name=retriever_id,
                                        ).to_string(),
                                        arguments={},
                                        result=tool_result,
                                    )
                                ]
                            ),
                        )
                    )

                return EngineHookResult.CALL_NEXT

            c[EngineHooks].on_preparing.append(on_message_acknowledged)
            c[EngineHooks].on_generating_messages.append(on_generating_messages)

        for agent in self._retrievers:
            for retriever_id, retriever in self._retrievers[agent].items():
                await setup_retriever(self._container, agent, retriever_id, retriever)

    async def get_tag(
        self,
        *,
        id: TagId | None = None,
        name: str | None = None,
    ) -> Tag:
        if (id is None) == (name is None):
            raise SDKError("Exactly one of 'id' or 'name' must be provided.")

        if id is not None:
            tag = await self._container[TagStore].read_tag(tag_id=id)
        else:
            assert name is not None
            tags = await self._container[TagStore].list_tags(name=name)
            if not tags:
                raise SDKError(f"Tag with name '{name}' not found.")
            tag = tags[0]

        return Tag(
            id=tag.id,
            name=tag.name,
            _server=self,
        )

    async def create_tag(self, name: str) -> Tag:
        self._advance_creation_progress()

        tag = await self._container[TagStore].create_tag(name=name)

        return Tag(
            id=tag.id,
            name=tag.name,
            _server=self,
        )

    async def create_agent(
        self,
        name: str,
        description: str,
        composition_mode: CompositionMode = CompositionMode.FLUID,
        output_mode: OutputMode = OutputMode.BLOCK,
        max_engine_iterations: int | None = None,
        tags: Sequence[TagId] = [],
        id: str | None = None,
        perceived_performance_policy: PerceivedPerformancePolicy | None = None,
        planner: Planner | None = None,
        preamble_config: PreambleConfiguration | None = None,
    ) -> Agent:
        """Creates a new agent with the specified name, description, and composition mode.

        Args:
            name: The agent's name (required).
            description: A description of the agent's purpose and capabilities (required).
            composition_mode: How the agent composes responses. Defaults to FLUID.
                - FLUID: Dynamic response composition
                - COMPOSITED: Composed from canned responses
                - STRICT: Strictly uses canned responses
            output_mode: How the agent delivers responses. Defaults to BLOCK.
                - BLOCK: Complete response delivered after generation finishes
                - STREAM: Response streamed progressively as generated
            max_engine_iterations: Maximum number of engine iterations per turn.
                Defaults to 3 if not specified.
            tags: List of tag IDs to associate with the agent. Defaults to empty list.
            id: Custom agent ID string (optional). If not provided, an ID will be
                automatically generated based on the agent's properties. Custom IDs
                can be any string format and are useful for maintaining consistent
                agent identifiers across deployments or integrations.
            perceived_performance_policy: Optional perceived performance policy for this agent.
                If not specified, the agent will use the default policy (BasicPerceivedPerformancePolicy).
            planner: Optional planner for this agent. Controls how the engine decides
                which tools to execute each iteration. If not specified, the agent will
                use the default planner (NullPlanner).
            preamble_config: Optional preamble configuration for this agent.
                Allows customizing the preamble examples and adding additional instructions.

        Returns:
            The created Agent instance.
        """

        if output_mode == OutputMode.STREAM and composition_mode != CompositionMode.FLUID:
            raise SDKError(
                "Streaming output mode is only supported with a fluid base composition mode."
            )

        self._advance_creation_progress()

        agent = await self._container[AgentStore].create_agent(
            name=name,
            description=description,
            max_engine_iterations=max_engine_iterations or 3,
            composition_mode=composition_mode.value,
            message_output_mode=output_mode,
            id=AgentId(id) if id is not None else None,
        )

        if perceived_performance_policy is not None:
            self._container[PerceivedPerformancePolicyProvider].set_policy(
                agent.id, perceived_performance_policy
            )

        if planner is not None:
            self._container[PlannerProvider].set_planner(agent.id, planner)

        if preamble_config is not None:
            self._container[CannedResponseGenerator].set_preamble_config(agent.id, preamble_config)

        return Agent(
            id=agent.id,
            name=agent.name,
            description=agent.description,
            max_engine_iterations=agent.max_engine_iterations,
            composition_mode=CompositionMode(agent.composition_mode),
            output_mode=agent.message_output_mode or OutputMode.BLOCK,
            tags=_tags_from_ids(tags),
            _server=self,
            _container=self._container,
        )

    async def list_agents(self) -> Sequence[Agent]:
        """Lists all agents."""

        agents = await self._container[AgentStore].list_agents()

        return [
            Agent(
                id=a.id,
                name=a.name,
                description=a.description,
                max_engine_iterations=a.max_engine_iterations,
                composition_mode=CompositionMode(a.composition_mode),
                output_mode=a.message_output_mode or OutputMode.BLOCK,
                tags=_tags_from_ids(a.tags),
                _server=self,
                _container=self._container,
            )
            for a in agents
        ]

    async def find_agent(self, *, id: str) -> Agent | None:
        """Finds an agent by its ID."""

        try:
            agent = await self._container[AgentStore].read_agent(AgentId(id))

            return Agent(
                id=agent.id,
                name=agent.name,
                description=agent.description,
                max_engine_iterations=agent.max_engine_iterations,
                composition_mode=CompositionMode(agent.composition_mode),
                output_mode=agent.message_output_mode or OutputMode.BLOCK,
                tags=_tags_from_ids(agent.tags),
                _server=self,
                _container=self._container,
            )
        except ItemNotFoundError:
            return None

    async def get_agent(self, *, id: str) -> Agent:
        """Retrieves an agent by its ID, raising an error if not found."""

        if agent := await self.find_agent(id=id):
            return agent
        raise SDKError(f"Agent with id {id} not found.")

    async def create_customer(
        self,
        name: str,
        metadata: Mapping[str, str] = {},
        tags: Sequence[TagId] = [],
        id: str | None = None,
    ) -> Customer:
        """Creates a new customer with the specified name and metadata.

        Args:
            name: The customer's name (required). An arbitrary string that
                identifies and/or describes the customer.
            metadata: Key-value pairs to describe the customer. Defaults to
                empty dictionary. This allows you to store arbitrary metadata
                about the customer (e.g., email, VIP status, preferences).
            tags: List of tag IDs to associate with the customer. Defaults to
                empty list. Tags are useful for categorizing and filtering
                customers.
            id: Custom customer ID string (optional). If not provided, an ID
                will be automatically generated based on the customer's
                properties. Custom IDs can be any string format and are useful
                for maintaining consistent customer identifiers across
                deployments or integrations (e.g., matching your internal
                customer IDs).

        Returns:
            The created Customer instance.
        """

        self._advance_creation_progress()

        customer = await self._container[CustomerStore].create_customer(
            name=name,
            extra=metadata,
            tags=tags,
            id=CustomerId(id) if id is not None else None,
        )

        return Customer(
            id=customer.id,
            name=customer.name,
            metadata=customer.extra,
            tags=_tags_from_ids(customer.tags),
            _server=self,
        )

    async def list_customers(self) -> Sequence[Customer]:
        """Lists all customers."""

        customers = await self._container[CustomerStore].list_customers()

        return [
            Customer(
                id=c.id,
                name=c.name,
                metadata=c.extra,
                tags=_tags_from_ids(c.tags),
            )
            for c in customers
        ]

    async def find_customer(
        self,
        *,
        id: str | None = None,
        name: str | None = None,
    ) -> Customer | None:
        """Finds a customer by its ID or name."""

        if not id and not name:
            raise SDKError("Either id or name must be provided to find a customer.")

        customer: _Customer | None = None

        if id:
            try:
                customer = await self._container[CustomerStore].read_customer(CustomerId(id))
            except ItemNotFoundError:
                return None

            return Customer(
                id=customer.id,
                name=customer.name,
                metadata=customer.extra,
                tags=_tags_from_ids(customer.tags),
            )

        if name:
            customers = await self._container[CustomerStore].list_customers()

            if customer := next((c for c in customers if c.name == name), None):
                return Customer(
                    id=customer.id,
                    name=customer.name,
                    metadata=customer.extra,
                    tags=_tags_from_ids(customer.tags),
                )

        return None

    async def get_customer(self, *, id: CustomerId) -> Customer:
        """Retrieves a customer by its ID, raising an error if not found."""

        if customer := await self.find_customer(id=id):
            return customer
        raise SDKError(f"Customer with id {id} not found.")

    async def create_journey(
        self,
        title: str,
        description: str,
        triggers: list[str | Guideline] | None = None,
        tags: Sequence[TagId] = [],
        id: JourneyId | None = None,
        composition_mode: CompositionMode | None = None,
        on_selected: Callable[[EngineContext, JourneyMatch], Awaitable[None]] | None = None,
        on_message: Callable[[EngineContext, JourneyMatch], Awaitable[None]] | None = None,
        labels: Iterable[str] = (),
        priority: int = 0,
        conditions: list[str | Guideline] | None = None,
    ) -> Journey:
        """Creates a new journey with the specified title, description, and triggers."""

        triggers = _resolve_journey_triggers_kwarg(triggers, conditions)

        self._advance_creation_progress()

        trigger_guidelines = [c for c in triggers if isinstance(c, Guideline)]

        str_triggers = [c for c in triggers if isinstance(c, str)]

        for str_trigger in str_triggers:
            guideline = await self._container[GuidelineStore].create_guideline(
                condition=str_trigger,
            )

            self._add_guideline_evaluation(
                guideline.id,
                GuidelineContent(condition=str_trigger, action=None),
                tool_ids=[],
            )

            trigger_guidelines.append(
                Guideline(
                    id=guideline.id,
                    condition=guideline.content.condition,
                    action=guideline.content.action,
                    tags=_tags_from_ids(guideline.tags),
                    metadata=guideline.metadata,
                    _server=self,
                    _container=self._container,
                )
            )

        stored_journey = await self._container[JourneyStore].create_journey(
            title=title,
            description=description,
            triggers=[c.id for c in trigger_guidelines],
            tags=[],
            id=id,
            composition_mode=CompositionMode._to_core_composition_mode(composition_mode),
            labels=set(labels) if labels else None,
            priority=priority,
        )

        journey = Journey(
            id=stored_journey.id,
            title=title,
            description=description,
            triggers=trigger_guidelines,
            states=[],
            transitions=[],
            tags=_tags_from_ids(tags),
            composition_mode=CompositionMode._from_core_composition_mode(
                stored_journey.composition_mode
            ),
            labels=stored_journey.labels,
            priority=stored_journey.priority,
            _start_state_id=stored_journey.root_id,
            _server=self,
            _container=self._container,
        )

        start_state = await self._container[JourneyStore].read_node(node_id=stored_journey.root_id)

        cast(list[JourneyState], journey.states).append(
            InitialJourneyState(
                id=start_state.id,
                action=start_state.action,
                tools=[],
                metadata=start_state.metadata,
                description=start_state.description,
                _journey=journey,
            )
        )

        for c in trigger_guidelines:
            await self._container[GuidelineStore].upsert_tag(
                guideline_id=c.id,
                tag_id=_Tag.for_journey_id(journey_id=journey.id).id,
            )

        self._add_journey_evaluation(journey)

        # Register journey-level on_selected and on_message handlers
        if on_selected:
            engine_hooks = self._container[EngineHooks]

            async def on_selected_shim(ctx: EngineContext) -> None:
                await on_selected(ctx, JourneyMatch(journey_id=journey.id))

            engine_hooks.on_journey_selected_handlers[journey.id].append(on_selected_shim)

        if on_message:
            engine_hooks = self._container[EngineHooks]

            async def on_message_shim(ctx: EngineContext) -> None:
                await on_message(ctx, JourneyMatch(journey_id=journey.id))

            engine_hooks.on_journey_message_handlers[journey.id].append(on_message_shim)

        return journey

    async def create_canned_response(
        self,
        template: str,
        tags: list[Tag] = [],
        signals: list[str] = [],
        metadata: Mapping[str, JSONSerializable] = {},
        field_dependencies: Sequence[str] = (),
    ) -> CannedResponseId:
        """Creates a canned response with the specified template, tags, and signals."""

        self._advance_creation_progress()

        canrep = await self._container[CannedResponseStore].create_canned_response(
            value=template,
            tags=[t.id for t in tags],
            fields=[],
            signals=signals,
            metadata=metadata,
            field_dependencies=field_dependencies,
        )

        return canrep.id

    def _get_startup_params(self) -> StartupParameters:
        async def override_stores_with_transient_versions(c: Callable[[], Container]) -> None:
            for interface, implementation in [
                (AgentStore, AgentDocumentStore),
                (TagStore, TagDocumentStore),
                (GuidelineStore, GuidelineDocumentStore),
                (GuidelineToolAssociationStore, GuidelineToolAssociationDocumentStore),
                (RelationshipStore, RelationshipDocumentStore),
            ]:
                if interface not in c().defined_types:
                    c()[interface] = await self._exit_stack.enter_async_context(
                        implementation(c()[IdGenerator], TransientDocumentDatabase())  #  type: ignore
                    )

            c()[EvaluationStore] = await self._exit_stack.enter_async_context(
                EvaluationDocumentStore(TransientDocumentDatabase())
            )

            def make_transient_db() -> Awaitable[DocumentDatabase]:
                async def shim() -> DocumentDatabase:
                    return TransientDocumentDatabase()

                return shim()

            def make_json_db(file_path: Path) -> Awaitable[DocumentDatabase]:
                return self._exit_stack.enter_async_context(
                    JSONFileDocumentDatabase(
                        c()[Logger],
                        file_path,
                    ),
                )

            mongo_client: object | None = None

            async def make_mongo_db(url: str, name: str) -> DocumentDatabase:
                nonlocal mongo_client

                if importlib.util.find_spec("pymongo") is None:
                    raise SDKError(
                        "MongoDB requires an additional package to be installed. "
                        "Please install parlant[mongo] to use MongoDB."
                    )

                from pymongo import AsyncMongoClient
                from parlant.adapters.db.mongo_db import MongoDocumentDatabase

                if mongo_client is None:
                    mongo_client = await self._exit_stack.enter_async_context(
                        AsyncMongoClient[Any](url)
                    )

                db = await self._exit_stack.enter_async_context(
                    MongoDocumentDatabase(
                        mongo_client=cast(AsyncMongoClient[Any], mongo_client),
                        database_name=f"parlant_{name}",
                        logger=c()[Logger],
                    )
                )

                return db

            async def make_persistable_store(t: type[T], spec: str, name: str, **kwargs: Any) -> T:
                store: T

                if spec in ["transient", "local"]:
                    store = await self._exit_stack.enter_async_context(
                        t(
                            database=await cast(
                                dict[str, Callable[[], Awaitable[DocumentDatabase]]],
                                {
                                    "transient": make_transient_db,
                                    "local": lambda: make_json_db(
                                        PARLANT_HOME_DIR / f"{name}.json"
                                    ),
                                },
                            )[spec](),
                            allow_migration=self._migrate,
                            **kwargs,
                        )  # type: ignore
                    )

                    return store
                elif spec.startswith("mongodb://") or spec.startswith("mongodb+srv://"):
                    store = await self._exit_stack.enter_async_context(
                        t(
                            database=await make_mongo_db(spec, name),
                            allow_migration=self._migrate,
                            **kwargs,
                        )  # type: ignore
                    )

                    return store
                else:
                    raise SDKError(
                        f"Invalid session store type: {self._session_store}. "
                        "Expected 'transient', 'local', or a MongoDB connection string."
                    )

            if isinstance(self._session_store, SessionStore):
                c()[SessionStore] = self._session_store
            elif SessionStore not in c().defined_types:
                c()[SessionStore] = await make_persistable_store(
                    SessionDocumentStore, self._session_store, "sessions"
                )

            if isinstance(self._customer_store, CustomerStore):
                c()[CustomerStore] = self._customer_store
            elif CustomerStore not in c().defined_types:
                c()[CustomerStore] = await make_persistable_store(
                    CustomerDocumentStore,
                    self._customer_store,
                    "customers",
                    id_generator=c()[IdGenerator],
                )

            if isinstance(self._context_variable_store, ContextVariableStore):
                c()[ContextVariableStore] = self._context_variable_store
            elif ContextVariableStore not in c().defined_types:
                c()[ContextVariableStore] = await make_persistable_store(
                    ContextVariableDocumentStore,
                    self._context_variable_store,
                    "context_variables",
                    id_generator=c()[IdGenerator],
                )

            c()[EventEmitterFactory] = EventPublisherFactory(
                agent_store=c()[AgentStore],
                session_store=c()[SessionStore],
            )

            if ServiceRegistry not in c().defined_types:
                c()[ServiceRegistry] = await self._exit_stack.enter_async_context(
                    ServiceDocumentRegistry(
                        database=TransientDocumentDatabase(),
                        event_emitter_factory=c()[EventEmitterFactory],
                        logger=c()[Logger],
                        tracer=c()[Tracer],
                        nlp_services_provider=lambda: {"__nlp__": c()[NLPService]},
                        allow_migration=False,
                    )
                )

            embedder_factory = EmbedderFactory(c())

            async def get_embedder_type() -> type[Embedder]:
                return type(await c()[NLPService].get_embedder())

            for vector_store_interface, vector_store_type in [
                (GlossaryStore, GlossaryVectorStore),
                (CannedResponseStore, CannedResponseVectorStore),
                (CapabilityStore, CapabilityVectorStore),
                (JourneyStore, JourneyVectorStore),
            ]:
                if vector_store_interface not in c().defined_types:
                    c()[vector_store_interface] = await self._exit_stack.enter_async_context(
                        vector_store_type(
                            id_generator=c()[IdGenerator],
                            vector_db=TransientVectorDatabase(
                                c()[Logger],
                                c()[Tracer],
                                embedder_factory,
                                lambda: c()[EmbeddingCache],
                            ),
                            document_db=TransientDocumentDatabase(),
                            embedder_factory=embedder_factory,
                            embedder_type_provider=get_embedder_type,
                        )  # type: ignore
                    )

        def get_env_based_module() -> ModuleType | None:
            if env_module_name := os.getenv("PARLANT_SDK_MODULE"):
                try:
                    return importlib.import_module(env_module_name)
                except ImportError as e:
                    raise SDKError(
                        f"Failed to import module '{env_module_name}' specified in PARLANT_SDK_MODULE environment variable."
                    ) from e
            return None

        async def configure(c: Container) -> Container:
            latest_container = c

            def get_latest_container() -> Container:
                return latest_container

            if self._configure_container:
                latest_container = await self._configure_container(latest_container.clone())

            c[NLPService] = self._nlp_service_func(c)

            await override_stores_with_transient_versions(get_latest_container)

            if self._configure_hooks:
                hooks = await self._configure_hooks(c[EngineHooks])
                latest_container[EngineHooks] = hooks

            if env_based_module := get_env_based_module():
                if module_func := getattr(env_based_module, "configure_container", None):
                    latest_container = await module_func(latest_container.clone())

            return latest_container

        async def async_nlp_service_shim(c: Container) -> NLPService:
            return c[NLPService]

        async def initialize(c: Container) -> None:
            host = "127.0.0.1"
            port = self.tool_service_port

            self._plugin_server = PluginServer(
                tools=[],
                port=port,
                host=host,
                hosted=True,
                plugin_data={
                    "server": self,
                    "container": c,
                },
                context_vars={
                    self._current_server_var: self,
                },
            )

            await c[ServiceRegistry].update_tool_service(
                name=INTEGRATED_TOOL_SERVICE_NAME,
                kind="sdk",
                url=f"http://{host}:{port}",
                transient=True,
            )

            await self._exit_stack.enter_async_context(self._plugin_server)
            self._exit_stack.push_async_callback(self._plugin_server.shutdown)

            self._evaluator = _CachedEvaluator(
                db=JSONFileDocumentDatabase(c[Logger], PARLANT_HOME_DIR / "evaluation_cache.json"),
                container=c,
            )
            await self._exit_stack.enter_async_context(self._evaluator)

            if self._initialize:
                await self._initialize(c)

            if env_based_module := get_env_based_module():
                if module_func := getattr(env_based_module, "initialize_container", None):
                    await module_func(c.clone())

        async def configure_api(app: FastAPI) -> FastAPI:
            if self._configure_api:
                await self._configure_api(app)

            if env_based_module := get_env_based_module():
                if module_func := getattr(env_based_module, "configure_api", None):
                    if new_app := await module_func(app):
                        app = new_app

            return app

        return StartupParameters(
            host=self.host,
            port=self.port,
            nlp_service=async_nlp_service_shim,
            log_level=self.log_level,
            modules=self.modules,
            migrate=self._migrate,
            configure=configure,
            initialize=initialize,
            configure_api=configure_api,
            contextvar_propagation={
                self._current_server_var: self,
            },
        )

    @classproperty
    def current(cls: Server) -> Server:
        """Get the current server from the asyncio task context.

        Returns:
            The current server instance

        Raises:
            RuntimeError: If no server is available in the current context
        """
        server = cls._current_server_var.get()
        if server is None:
            raise RuntimeError("No server available in current context")
        return server


__all__ = [
    "Agent",
    "AgentId",
    "AllOf",
    "AnyOf",
    "AuthorizationException",
    "AuthorizationPolicy",
    "BasicNoMatchResponseProvider",
    "BasicOptimizationPolicy",
    "BasicPerceivedPerformancePolicy",
    "BasicPlanner",
    "BasicRateLimiter",
    "CannedResponseId",
    "Capability",
    "CapabilityId",
    "CompositionMode",
    "Container",
    "ContextVariableId",
    "ContextVariableStore",
    "ControlOptions",
    "Criticality",
    "Customer",
    "CustomerMetadata",
    "CustomerId",
    "CustomerModerationContext",
    "CustomerStore",
    "DefaultBaseModel",
    "DeferredRetriever",
    "DevelopmentAuthorizationPolicy",
    "END_JOURNEY",
    "Embedder",
    "EmbedderFactory",
    "EmbedderHints",
    "EmbeddingResult",
    "EmittedEvent",
    "EngineContext",
    "EngineHook",
    "EngineHookResult",
    "EngineHooks",
    "EstimatingTokenizer",
    "Event",
    "EventKind",
    "EventSource",
    "FallbackSchematicGenerator",
    "Guideline",
    "GuidelineId",
    "GuidelineMatchingContext",
    "Interaction",
    "InteractionMessage",
    "JSONSerializable",
    "Journey",
    "JourneyId",
    "JourneyState",
    "JourneyStateId",
    "JourneyStateMatch",
    "JourneyTransition",
    "JourneyTransitionId",
    "Lifespan",
    "LogLevel",
    "Logger",
    "MATCH_ALWAYS",
    "MessageEventData",
    "ModelGeneration",
    "ModelSize",
    "ModelType",
    "ModerationCheck",
    "ModerationService",
    "ModerationTag",
    "NLPService",
    "NLPServices",
    "NoMatchResponseProvider",
    "NoModeration",
    "NullPerceivedPerformancePolicy",
    "NullPlan",
    "NullPlanner",
    "Operation",
    "OutputMode",
    "OptimizationPolicy",
    "PerceivedPerformancePolicy",
    "PerceivedPerformancePolicyProvider",
    "Plan",
    "Planner",
    "PlannerProvider",
    "PluginServer",
    "PreambleConfiguration",
    "ProductionAuthorizationPolicy",
    "PromptBuilder",
    "PromptSection",
    "RateLimitExceededException",
    "RateLimiter",
    "RelationshipEntity",
    "RelationshipEntityId",
    "RelationshipEntityKind",
    "RelationshipId",
    "RelationshipKind",
    "RetrieverContext",
    "RetrieverFunction",
    "RetrieverResult",
    "SchematicGenerationResult",
    "SchematicGenerator",
    "SchematicGeneratorHints",
    "Server",
    "ServiceRegistry",
    "Session",
    "SessionId",
    "SessionLabels",
    "SessionMetadata",
    "SessionMode",
    "SessionStatus",
    "SessionStore",
    "StatusEventData",
    "T",
    "Tag",
    "TagId",
    "Term",
    "TermId",
    "Tool",
    "ToolContext",
    "ToolContextAccessor",
    "ToolEntry",
    "ToolEventData",
    "ToolRef",
    "TransientGuideline",
    "ToolId",
    "ToolParameterDescriptor",
    "ToolParameterOptions",
    "ToolParameterType",
    "ToolResult",
    "Tracer",
    "Variable",
    "Variable",
    "VoiceOptimizedPerceivedPerformancePolicy",
    "tool",
]
