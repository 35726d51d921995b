"""Talking to a model: the OpenAI-compatible HTTP client and how a reply is taken apart, token
estimates, the llama.cpp server quotabench starts, and the scripted server and models the tests
and demos drive.

chat.py             the ChatEndpoint seam and what a call is made of: settings, tries, completion, errors
endpoint.py         ChatClient (fills ChatEndpoint): one call, its HTTP tries, retries, usage
httpclient.py       the httpx client it sends through: TLS only for https, cookies looked for only when set
response.py         a reply body or SSE stream taken apart; what a malformed one becomes
tokens.py           token estimates when an endpoint reports no usage
provider.py         what a hosted provider says beyond the chat: usage details, rate-limit headers, quota errors
pacing.py           the client-side token bucket that keeps calls under the provider's announced limits
llamacpp.py         the local llama.cpp server: command line, start, health, GGUF file
scripted_server.py  an OpenAI-compatible server on loopback that plays scripted models
scripted_http.py    its HTTP side: routes, faults on the wire, streaming
scripted_models.py  the scripts: solver, unparseable, coin, second-passes, ...
provider_model.py   a hosted provider's billing and limits, played by the scripted server (cache, quota, ...)
"""
