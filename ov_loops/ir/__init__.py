"""The IR side, with lxml and no OpenVINO: read IR XML into LoopSpecs and validate Loop layers."""
