import type { Theme } from 'vitepress';
import DefaultTheme from 'vitepress/theme';
import PolicyPlayground from './components/PolicyPlayground.vue';
import './custom.css';

export default {
  extends: DefaultTheme,
  enhanceApp({ app }) {
    app.component('PolicyPlayground', PolicyPlayground);
  },
} satisfies Theme;
