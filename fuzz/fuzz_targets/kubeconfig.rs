//! Kubeconfig files as `--kubeconfig` and `KUBECONFIG` name them, read as the commands read
//! them: kube's parser, then the client configuration for the current context. Exec plugins
//! and auth providers are removed first: a fuzzer must not run the commands it invents.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut config) = kube::config::Kubeconfig::from_yaml(text) else {
        return;
    };
    for named in &mut config.auth_infos {
        if let Some(auth) = named.auth_info.as_mut() {
            auth.exec = None;
            auth.auth_provider = None;
        }
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().build() else {
        return;
    };
    let options = kube::config::KubeConfigOptions::default();
    let _ = runtime.block_on(kube::Config::from_custom_kubeconfig(config, &options));
});
