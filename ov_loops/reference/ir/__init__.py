"""The numpy reference of OpenVINO IR."""
