# Copyright 2023 The Qwen team, Alibaba Group. All rights reserved.
# 
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
# 
#    http://www.apache.org/licenses/LICENSE-2.0
# 
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

from .amap_weather import AmapWeather
from .base import TOOL_REGISTRY, BaseTool
from .code_interpreter import CodeInterpreter
from .doc_parser import DocParser
from .extract_doc_vocabulary import ExtractDocVocabulary
from .image_gen import ImageGen
from .python_executor import PythonExecutor
from .retrieval import Retrieval
from .image_zoom_in_qwen3vl import ImageZoomInToolQwen3VL
from .image_search import ImageSearch
from .search_tools import FrontPageSearch, HybridSearch, KeywordSearch, VectorSearch
from .simple_doc_parser import SimpleDocParser
from .storage import Storage
from .web_extractor import WebExtractor
from .mcp_manager import MCPManager
from .web_search import WebSearch

__all__ = [
    'BaseTool',
    'CodeInterpreter',
    'ImageGen',
    'AmapWeather',
    'TOOL_REGISTRY',
    'DocParser',
    'KeywordSearch',
    'Storage',
    'Retrieval',
    'ImageZoomInToolQwen3VL',
    'ImageSearch',
    'WebExtractor',
    'SimpleDocParser',
    'VectorSearch',
    'HybridSearch',
    'FrontPageSearch',
    'ExtractDocVocabulary',
    'PythonExecutor',
    'MCPManager',
    'WebSearch',
]
