"""
Module defining constants used throughout the application.

This module contains definitions of constants that are used across various
components of the application to maintain consistency and ease of configuration.

Constants
---------
MAX_EDIT_REFINEMENT_STEPS : int
    The maximum number of refinement steps allowed when generating edit blocks.
"""
MAX_EDIT_REFINEMENT_STEPS = 2
